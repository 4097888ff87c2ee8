import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { after, describe, it } from '../../test/support/node-test.js';
import { Forbidden } from '../errors.js';
import { DataRoots } from './data-roots.js';

const base = mkdtempSync(join(tmpdir(), 'steward-roots-'));
const root = join(base, 'root');
const outside = join(base, 'outside');
mkdirSync(root);
mkdirSync(outside);
after(() => rmSync(base, { recursive: true, force: true }));

function writeRaster(path: string): void {
  const dataset = gdal.open(path, 'w', 'GTiff', 4, 4, 1, gdal.GDT_Byte);
  dataset.geoTransform = [0, 1, 0, 4, 0, -1];
  dataset.srs = gdal.SpatialReference.fromEPSG(4326);
  dataset.bands.get(1).pixels.write(0, 0, 4, 4, new Uint8Array(16).fill(7));
  dataset.close();
}

function vrtOf(source: string): string {
  return `<VRTDataset rasterXSize="4" rasterYSize="4"><VRTRasterBand dataType="Byte" band="1"><SimpleSource>
<SourceFilename relativeToVRT="0">${source}</SourceFilename><SourceBand>1</SourceBand></SimpleSource></VRTRasterBand></VRTDataset>`;
}

const secret = join(outside, 'secret.tif');
writeRaster(secret);
const inside = join(root, 'inside.tif');
writeRaster(inside);

const refusedAs = (pattern: RegExp) => (error: unknown) => error instanceof Forbidden && pattern.test(error.message);

describe('data roots by content', () => {
  it('takes a dataset inside, and answers a missing one as one outside', async () => {
    const roots = await DataRoots.create([root]);
    await roots.checkDataset(inside);
    await assert.rejects(roots.checkDataset(secret), refusedAs(/is not a dataset inside the data folders/));
    await assert.rejects(
      roots.checkDataset(join(root, 'none.tif')),
      refusedAs(/is not a dataset inside the data folders/),
    );
  });

  it('refuses a VRT, by its content, unless indirection is allowed; then its sources must be inside', async () => {
    const pointing = join(root, 'pointing.png');
    writeFileSync(pointing, vrtOf(secret));
    const local = join(root, 'local.vrt');
    writeFileSync(local, vrtOf(inside));
    const strict = await DataRoots.create([root]);
    for (const path of [pointing, local, `CSV:${join(root, 'x.csv')}`]) {
      await assert.rejects(strict.checkDataset(path), refusedAs(/STEWARD_ALLOW_INDIRECT_DATASOURCES/), path);
    }
    const allowing = await DataRoots.create([root], true);
    await allowing.checkDataset(local);
    await assert.rejects(allowing.checkDataset(pointing), refusedAs(/is not a dataset inside/));
  });

  it('refuses a dataset whose sidecar leads outside', async () => {
    const raster = join(root, 'sidecar.tif');
    copyFileSync(inside, raster);
    const roots = await DataRoots.create([root]);
    await roots.checkDataset(raster);
    const aux = join(outside, 'stolen.aux.xml');
    writeFileSync(aux, '<PAMDataset/>');
    symlinkSync(aux, `${raster}.aux.xml`);
    // A new file version: the verdict remembered for the old one does not stand.
    copyFileSync(inside, `${raster}.new`);
    rmSync(raster);
    copyFileSync(`${raster}.new`, raster);
    await assert.rejects(roots.checkDataset(raster), refusedAs(/is not a dataset inside/));
  });

  it('refuses new layers indirection even without roots, and takes anything else as before', async () => {
    const open = await DataRoots.create(undefined);
    await open.checkDataset(secret, true);
    await open.checkDataset(join(outside, 'missing.tif'), true);
    await assert.rejects(open.checkDataset(`CSV:${secret}`, true), refusedAs(/STEWARD_ALLOW_INDIRECT_DATASOURCES/));
    await open.checkDataset(`CSV:${secret}`);
  });
});
