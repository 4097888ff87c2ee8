import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import gdal from 'gdal-async';

import { CrsResolver } from '../gdal/crs.js';
import { ProbeError } from '../gdal/probe.js';
import { LayerInspector } from './layer-inspector.js';

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

describe('the layer inspector', () => {
  it('probes a local datasource again once its file changes, and finds it invalid once it is gone', async () => {
    const inspector = new LayerInspector(new CrsResolver());
    const path = join(folder, 'bands.tif');
    writeRaster(path, 1);
    const first = await inspector.inspect(path, 'raster');
    assert.equal(first.probed?.type === 'raster' && first.probed.bands, 1);
    assert.equal(await inspector.inspect(path, 'raster'), first, 'an unchanged file is probed again');

    writeRaster(path, 3);
    const replaced = await inspector.inspect(path, 'raster');
    assert.equal(replaced.probed?.type === 'raster' && replaced.probed.bands, 3);

    rmSync(path);
    const gone = await inspector.inspect(path, 'raster');
    assert.equal(gone.valid, false);
    assert.match(gone.reason ?? '', /cannot open/);
  });

  it("gives a new layer the remembered probe of an unchanged file, and a changed file's new one", async () => {
    const inspector = new LayerInspector(new CrsResolver());
    const path = join(folder, 'added.tif');
    writeRaster(path, 2);
    const first = await inspector.probe(path, 'raster');
    assert.equal(first.type === 'raster' && first.bands, 2);
    assert.equal(await inspector.probe(path, 'raster'), first, 'an unchanged file is probed again');
    assert.equal((await inspector.inspect(path, 'raster')).probed, first, 'the layers read what was added');

    writeRaster(path, 3);
    const replaced = await inspector.probe(path, 'raster');
    assert.equal(replaced.type === 'raster' && replaced.bands, 3);

    rmSync(path);
    await assert.rejects(inspector.probe(path, 'raster'), ProbeError);
  });
});
