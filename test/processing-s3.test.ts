import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import gdal from 'gdal-async';

import { Unprocessable } from '../src/errors.js';
import { calculateRaster } from '../src/gdal/calculator/calculate.js';
import { OUTPUT_NO_DATA } from '../src/gdal/calculator/output.js';
import { parseExpression } from '../src/gdal/calculator/parser.js';
import { configureGdalMemory } from '../src/gdal/gdal-memory.js';
import { computeHistogram, histogramOffLoop } from '../src/gdal/histogram.js';
import { copyToObjectStorage } from '../src/gdal/object-storage.js';
import { buildOverviews } from '../src/gdal/overviews.js';
import { configureObjectStorage, gdalS3Options } from '../src/gdal/s3.js';
import { readS3Settings } from '../src/s3-settings.js';
import { after, before, describe, test } from './support/node-test.js';
import { askOracle, type OverviewComparison } from './support/raster-oracle.js';
import { scratchFolder, seededRandom, writeRaster } from './support/rasters.js';
import { type S3Process, startS3Process } from './support/s3-process.js';

const run = promisify(execFile);
const BUCKET = 'rasters';

interface GdalInfo {
  bands: Array<{ noDataValue?: number; overviews?: Array<{ size: number[] }> }>;
}

describe('raster processing on object storage', () => {
  let s3: S3Process;
  let folder: Awaited<ReturnType<typeof scratchFolder>>;
  /** Environment for a separate GDAL process (gdalinfo, Python) reading the bucket. */
  let gdalEnv: NodeJS.ProcessEnv;
  const local = new Map<string, string>();
  const remote = new Map<string, string>();

  /** gdalinfo run in its own process, so nothing cached in this one can help it. */
  async function gdalinfo(path: string): Promise<GdalInfo> {
    const { stdout } = await run('gdalinfo', ['-json', path], { env: gdalEnv });
    return JSON.parse(stdout) as GdalInfo;
  }

  before(async () => {
    configureGdalMemory();
    s3 = await startS3Process(BUCKET);
    const settings = readS3Settings(s3.env);
    configureObjectStorage(settings);
    gdalEnv = { ...process.env, ...gdalS3Options(settings) };
    folder = await scratchFolder('steward-s3-data-');
    const random = seededRandom(3);
    const grid = { width: 700, height: 650, tile: 256 };
    local.set(
      'red',
      writeRaster(join(folder.dir, 'red.tif'), {
        ...grid,
        type: 'UInt16',
        noData: 0,
        value: (x) => (x % 31 === 0 ? 0 : Math.floor(random() * 4000) + 1),
      }),
    );
    local.set(
      'nir',
      writeRaster(join(folder.dir, 'nir.tif'), {
        ...grid,
        type: 'UInt16',
        noData: 0,
        value: () => Math.floor(random() * 6000) + 1,
      }),
    );
    for (const [name, path] of local) {
      const target = `/vsis3/${BUCKET}/inputs/${name}.tif`;
      copyToObjectStorage(path, target);
      remote.set(name, target);
    }
  });
  after(async () => {
    await s3?.stop();
    await folder?.remove();
  });

  test('reads inputs from the bucket and writes the result there, with overviews and no-data', async () => {
    const tree = parseExpression('(nir@1 - red@1) / (nir@1 + red@1)');
    const output = `/vsis3/${BUCKET}/results/ndvi.tif`;
    await calculateRaster(tree, remote, output);
    const reference = join(folder.dir, 'ndvi-local.tif');
    await calculateRaster(tree, local, reference);

    const info = await gdalinfo(output);
    assert.equal(Math.fround(info.bands[0]?.noDataValue ?? 0), Math.fround(OUTPUT_NO_DATA));
    assert.deepEqual(
      info.bands[0]?.overviews?.map((overview) => overview.size),
      [
        [350, 325],
        [175, 163],
      ],
    );

    const read = async (path: string): Promise<Float32Array> => {
      const dataset = await gdal.openAsync(path);
      const pixels = await dataset.bands.get(1).pixels.readAsync(0, 0, 700, 650, new Float32Array(700 * 650));
      dataset.close();
      return pixels;
    };
    assert.deepEqual(await read(output), await read(reference));
    assert.ok((await read(output)).includes(OUTPUT_NO_DATA));

    const compression = async (path: string): Promise<string | undefined> => {
      const dataset = await gdal.openAsync(path);
      const structure = dataset.getMetadata('IMAGE_STRUCTURE') as Record<string, string>;
      dataset.close();
      return structure['COMPRESSION'];
    };
    assert.equal(await compression(output), 'ZSTD', 'an output uploaded to the bucket is compressed');
    assert.equal(await compression(reference), undefined, 'a local output is not');
  });

  test('builds overviews of a bucket raster as <key>.ovr beside it, visible to GDAL', async () => {
    const source = remote.get('red') as string;
    assert.equal((await gdalinfo(source)).bands[0]?.overviews, undefined);
    assert.deepEqual(await buildOverviews(source), [2, 4]);

    const info = await gdalinfo(source);
    assert.deepEqual(
      info.bands[0]?.overviews?.map((overview) => overview.size),
      [
        [350, 325],
        [175, 163],
      ],
    );
    assert.ok((await gdal.fs.readDirAsync(`/vsis3/${BUCKET}/inputs`)).includes('red.tif.ovr'));
    const dataset = await gdal.openAsync(source);
    assert.equal(dataset.bands.get(1).overviews.count(), 2, 'this process sees the new .ovr at once');
    dataset.close();

    const averages = await askOracle<OverviewComparison>({ command: 'overview-check', path: source }, gdalEnv);
    assert.equal(averages.nodata_mismatches, 0);
    assert.ok(averages.max_diff <= 0.5, JSON.stringify(averages));
    assert.deepEqual(await buildOverviews(source), [2, 4], 'a second call finds them');
  });

  test('computes histograms of bucket rasters, in this process and in a worker process as the API does', async () => {
    const [fromBucket, inWorker, fromDisk] = await Promise.all([
      computeHistogram(remote.get('nir') as string, { count: 50 }),
      histogramOffLoop(remote.get('nir') as string, { count: 50 }),
      computeHistogram(local.get('nir') as string, { count: 50 }),
    ]);
    assert.deepEqual(fromBucket, fromDisk);
    assert.deepEqual(inWorker, fromDisk);
  });

  test('answers 422 and leaves no work file behind when the bucket does not exist', async () => {
    const workFolders = async (): Promise<string[]> =>
      (await readdir(tmpdir())).filter((name) => name.startsWith('steward-output-'));
    const before = await workFolders();
    await assert.rejects(
      calculateRaster(parseExpression('red@1 * 2'), remote, '/vsis3/no-such-bucket/out.tif'),
      Unprocessable,
    );
    assert.deepEqual(await workFolders(), before);
  });

  test('builds local overviews as an .ovr beside the file, leaving the file itself alone', async () => {
    const path = local.get('nir') as string;
    const before = await stat(path);
    assert.deepEqual(await buildOverviews(path), [2, 4]);
    assert.ok((await stat(`${path}.ovr`)).size > 0);
    assert.equal((await stat(path)).mtimeMs, before.mtimeMs);
  });
});
