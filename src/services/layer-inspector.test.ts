import assert from 'node:assert/strict';
import { linkSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { after, describe, it } from '../../test/support/node-test.js';
import { CrsResolver } from '../gdal/crs.js';
import { type GdalSource } from '../gdal/datasource.js';
import { ProbeError } from '../gdal/probe.js';
import { LayerInspector } from './layer-inspector.js';

/** A local file as GDAL opens it. */
const file = (path: string): GdalSource => ({ kind: 'file', gdalPath: path });

const folder = mkdtempSync(join(tmpdir(), 'steward-inspector-'));
after(() => rmSync(folder, { recursive: true, force: true }));

/** A GeoTIFF of `bands` bands written at `path` (through a temporary name, as a file is replaced). */
function writeRaster(path: string, bands: number): void {
  const temporary = `${path}.new.tif`;
  const dataset = gdal.open(temporary, 'w', 'GTiff', 4, 4, bands, gdal.GDT_Byte);
  dataset.geoTransform = [0, 1, 0, 4, 0, -1];
  dataset.srs = gdal.SpatialReference.fromEPSG(4326);
  for (let band = 1; band <= bands; band++)
    dataset.bands.get(band).pixels.write(0, 0, 4, 4, new Uint8Array(16).fill(band));
  dataset.close();
  renameSync(temporary, path);
}

/**
 * An inspector that remembers `bound` inspections, over `count` names of one raster (links to one
 * file, which the inspector tells apart by name). The function returned inspects the raster of
 * that index and tells whether it was recalled: the inspection given the first time, not probed anew.
 */
function boundedInspector(name: string, bound: number, count: number): (index: number) => Promise<boolean> {
  const inspector = new LayerInspector(new CrsResolver(), bound);
  const base = join(folder, `${name}.tif`);
  writeRaster(base, 1);
  const paths = Array.from({ length: count }, (_, index) => join(folder, `${name}-${index}.tif`));
  for (const path of paths) linkSync(base, path);
  const firsts = new Map<number, unknown>();
  return async (index) => {
    const inspection = await inspector.inspect(file(paths[index] ?? ''), 'raster');
    const first = firsts.get(index);
    if (first === undefined) firsts.set(index, inspection);
    return inspection === first;
  };
}

describe('the layer inspector', () => {
  it('probes a local datasource again once its file changes, and finds it invalid once it is gone', async () => {
    const inspector = new LayerInspector(new CrsResolver());
    const path = join(folder, 'bands.tif');
    writeRaster(path, 1);
    const first = await inspector.inspect(file(path), 'raster');
    assert.equal(first.probed?.type === 'raster' && first.probed.bands, 1);
    assert.equal(await inspector.inspect(file(path), 'raster'), first, 'an unchanged file is probed again');

    writeRaster(path, 3);
    const replaced = await inspector.inspect(file(path), 'raster');
    assert.equal(replaced.probed?.type === 'raster' && replaced.probed.bands, 3);

    rmSync(path);
    const gone = await inspector.inspect(file(path), 'raster');
    assert.equal(gone.valid, false);
    assert.match(gone.reason ?? '', /cannot open/);
  });

  it("gives a new layer the remembered probe of an unchanged file, and a changed file's new one", async () => {
    const inspector = new LayerInspector(new CrsResolver());
    const path = join(folder, 'added.tif');
    writeRaster(path, 2);
    const first = await inspector.probe(file(path), 'raster');
    assert.equal(first.type === 'raster' && first.bands, 2);
    assert.equal(await inspector.probe(file(path), 'raster'), first, 'an unchanged file is probed again');
    assert.equal((await inspector.inspect(file(path), 'raster')).probed, first, 'the layers read what was added');

    writeRaster(path, 3);
    const replaced = await inspector.probe(file(path), 'raster');
    assert.equal(replaced.type === 'raster' && replaced.bands, 3);

    rmSync(path);
    await assert.rejects(inspector.probe(file(path), 'raster'), ProbeError);
  });

  it('remembers no more inspections than its bound, dropping the least recently used first', async () => {
    const recalled = boundedInspector('bounded', 3, 6);
    for (const index of [0, 1, 2, 3, 4, 5]) assert.equal(await recalled(index), false, `${index} is probed`);
    // The three inspected last are remembered; recalling them keeps them, and drops none.
    assert.deepEqual([await recalled(5), await recalled(4), await recalled(3)], [true, true, true]);
    // Each probed anew drops the one recalled longest ago, so the three dropped are probed again in turn.
    assert.deepEqual([await recalled(2), await recalled(1), await recalled(0)], [false, false, false]);
  });

  it('keeps a recalled inspection while older ones are dropped', async () => {
    const recalled = boundedInspector('recalled', 3, 4);
    for (const index of [0, 1, 2]) await recalled(index);
    assert.equal(await recalled(0), true, 'the first is recalled');
    assert.equal(await recalled(3), false, 'a fourth is probed, and one of the others dropped');
    assert.deepEqual([await recalled(0), await recalled(2), await recalled(1)], [true, true, false]);
  });
});
