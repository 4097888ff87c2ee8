/**
 * Where the raster calculator and overview building may write, and how much: every refusal with
 * its status on real files and real (tmpfs) disks, a client that leaves, and a run that fails.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import gdal from 'gdal-async';
import { pino } from 'pino';

import { InsufficientStorage } from '../src/errors.js';
import { configureGdalMemory } from '../src/gdal/gdal-memory.js';
import { buildApp } from '../src/http/app.js';
import { processingRoutes } from '../src/http/routes/processing.js';
import { DataRoots } from '../src/services/data-roots.js';
import { ProcessingService } from '../src/services/processing.js';
import { after, before, describe, test } from './support/node-test.js';
import { MemoryLayers } from './support/processing-app.js';
import { scratchFolder, writeRaster } from './support/rasters.js';
import { mountTmpfs, type Tmpfs } from './support/tmpfs.js';
import { until } from './support/wait.js';

configureGdalMemory();
const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** The pids of this process's children now (those its main thread started). */
async function children(): Promise<number[]> {
  const text = await readFile(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8');
  return text
    .split(' ')
    .filter((pid) => pid.trim() !== '')
    .map(Number);
}

/** A GeoTIFF of `width` x `height` Byte pixels whose blocks were never written: tiny on disk. */
function sparseRaster(path: string, width: number, height: number): string {
  const options = ['TILED=YES', 'SPARSE_OK=TRUE', 'BIGTIFF=YES'];
  const dataset = gdal.drivers.get('GTiff').create(path, width, height, 1, 'Byte', options);
  dataset.geoTransform = [500000, 10, 0, 4000000, 0, -10];
  dataset.srs = gdal.SpatialReference.fromEPSG(32631);
  dataset.close();
  return path;
}

const NO_ERROR = { error: '', code: '' };

describe('processing outputs', () => {
  let folder: Awaited<ReturnType<typeof scratchFolder>>;
  let root = '';
  let disk: Tmpfs;
  let app: FastifyInstance;
  let service: ProcessingService;
  let dem = '';
  let tinyDem = '';

  const post = async (url: string, payload: object) => {
    const response = await app.inject({ method: 'POST', url, payload });
    const { error, code } = response.statusCode >= 400 ? response.json<{ error: string; code: string }>() : NO_ERROR;
    return { status: response.statusCode, error, code };
  };
  const calculate = (output: string, extra: object = {}) =>
    post('/api/processing/raster/calculator/site', { expression: 'dem@1 * 2', output, ...extra });

  before(async () => {
    folder = await scratchFolder('steward-outputs-');
    root = join(folder.dir, 'root');
    await mkdir(root);
    disk = await mountTmpfs(2 * MIB);
    dem = writeRaster(join(root, 'dem.tif'), { type: 'Int16', width: 300, height: 280, value: (x, y) => x + y });
    tinyDem = writeRaster(join(disk.dir, 'tiny.tif'), { type: 'Byte', width: 600, height: 600, value: (x) => x % 7 });
    const layers = new MemoryLayers({
      'public/site': [
        { name: 'dem', type: 'raster', source: dem },
        { name: 'huge', type: 'raster', source: sparseRaster(join(root, 'huge.tif'), 60000, 60000) },
        { name: 'tiny', type: 'raster', source: tinyDem },
      ],
      // Another project's layer: its source is no output either.
      'public/other': [{ name: 'shared', type: 'raster', source: join(root, 'shared.tif') }],
    });
    writeRaster(join(root, 'shared.tif'), { type: 'Byte', width: 10, height: 10, value: () => 1 });
    const roots = await DataRoots.create([root, disk.dir]);
    service = new ProcessingService(layers, { outputs: roots, limits: { maxBytes: 8 * GIB, reserve: 0 } });
    app = await buildApp(pino({ level: 'silent' }), [processingRoutes(service)], { apiToken: undefined });
  });
  after(async () => {
    await app.close();
    await disk.unmount();
    await folder.remove();
  });

  test('refuses an output outside the data roots with 403, writing nothing', async () => {
    const outside = join(folder.dir, 'outside.tif');
    const refused = await calculate(outside);
    assert.deepEqual([refused.status, refused.code], [403, 'outside_data_roots']);
    assert.match(refused.error, /is outside the data folders this server may use/);
    await symlink(folder.dir, join(root, 'link'));
    assert.equal((await calculate(join(root, 'link', 'outside.tif'))).status, 403, 'through a link');
    await assert.rejects(stat(outside));
  });

  test("refuses a project layer's source with 409, even with overwrite, and leaves it as it was", async () => {
    const before = (await stat(dem)).mtimeMs;
    for (const output of [dem, join(root, 'shared.tif'), `${root}//./dem.tif`]) {
      for (const overwrite of [false, true]) {
        const reply = await calculate(output, { overwrite });
        assert.deepEqual([reply.status, reply.code], [409, 'output_is_datasource'], `${output} overwrite ${overwrite}`);
        assert.match(reply.error, /datasource of a project layer/);
      }
    }
    assert.equal((await stat(dem)).mtimeMs, before);
    const dataset = gdal.open(dem);
    assert.equal(dataset.bands.get(1).pixels.get(7, 5), 12, 'the source keeps its pixels');
    dataset.close();
  });

  test('refuses an existing file with 409 unless "overwrite": true, which replaces it', async () => {
    const output = join(root, 'double.tif');
    assert.equal((await calculate(output)).status, 201);
    const reply = await post('/api/processing/raster/calculator/site', { expression: 'dem@1 * 3', output });
    assert.deepEqual([reply.status, reply.code], [409, 'output_exists']);
    assert.match(reply.error, /exists already; send "overwrite": true/);
    const kept = gdal.open(output);
    assert.equal(kept.bands.get(1).pixels.get(7, 5), 24, 'the refused run left the file as it was');
    kept.close();
    const replaced = await post('/api/processing/raster/calculator/site', {
      expression: 'dem@1 * 3',
      output,
      overwrite: true,
    });
    assert.equal(replaced.status, 201);
    const dataset = gdal.open(output);
    assert.equal(dataset.bands.get(1).pixels.get(7, 5), 36);
    dataset.close();
  });

  test('refuses with 422 an output estimated over the limit: a sparse input of 60000 x 60000', async () => {
    const output = join(root, 'huge-out.tif');
    const reply = await post('/api/processing/raster/calculator/site', { expression: 'huge@1 + 1', output });
    assert.equal(reply.status, 422);
    assert.match(
      reply.error,
      /would take about 1[0-9.]+ GiB, over the limit of 8\.0 GiB \(STEWARD_PROCESSING_OUTPUT_LIMIT\)/,
    );
    assert.deepEqual(
      (await readdir(root)).filter((name) => name.includes('huge-out')),
      [],
      'no work file left',
    );
  });

  test('refuses overviews estimated over the limit with 422', async () => {
    const layers = new MemoryLayers({ 'public/p': [{ name: 'dem', type: 'raster', source: dem }] });
    const limited = new ProcessingService(layers, { limits: { maxBytes: 10_000, reserve: 0 } });
    await assert.rejects(
      limited.planOverviews({ name: 'p', schema: 'public' }, 'dem'),
      /overviews .*dem\.tif\.ovr would take about 41\.0 KiB, over the limit of 9\.8 KiB/,
    );
    await assert.rejects(stat(`${dem}.ovr`));
  });

  test('answers 507 naming the mount when its disk has no room for the output', async () => {
    // 600 x 600 Float32 with its overviews: about 1.8 MiB, on a 2 MiB disk holding the input.
    const output = join(disk.dir, 'out.tif');
    const reply = await post('/api/processing/raster/calculator/site', { expression: 'tiny@1 * 2', output });
    assert.equal(reply.status, 507);
    assert.match(
      reply.error,
      new RegExp(`insufficient storage: .*the disk mounted at ${disk.dir} has [0-9.]+ (KiB|MiB) free`),
    );
    assert.deepEqual((await readdir(disk.dir)).sort(), ['tiny.tif']);
  });

  test('answers 507 when the room left would fall under the reserve (STEWARD_MIN_FREE_SPACE)', async () => {
    const layers = new MemoryLayers({
      'public/p': [
        { name: 'dem', type: 'raster', source: dem },
        { name: 'tiny', type: 'raster', source: tinyDem },
      ],
    });
    const reserved = new ProcessingService(layers, { limits: { maxBytes: 8 * GIB, reserve: 2 * MIB } });
    const project = { name: 'p', schema: 'public' };
    const refused = (error: Error) =>
      error instanceof InsufficientStorage &&
      error.message.includes(`the disk mounted at ${disk.dir}`) &&
      error.message.includes('2.0 MiB kept free (STEWARD_MIN_FREE_SPACE)');
    await assert.rejects(
      reserved.planCalculation(project, { expression: 'dem@1', output: join(disk.dir, 'r.tif') }),
      refused,
    );
    await assert.rejects(reserved.planOverviews(project, 'tiny'), refused);
    await reserved.planOverviews(project, 'dem'); // the big disk has the room
    assert.deepEqual((await readdir(disk.dir)).sort(), ['tiny.tif']);
  });

  test('a run that fails on a full disk answers 507 and leaves no file', async () => {
    const output = join(disk.dir, 'small.tif');
    const layers = new MemoryLayers({ 'public/p': [{ name: 'dem', type: 'raster', source: dem }] });
    const work = await new ProcessingService(layers).planCalculation(
      { name: 'p', schema: 'public' },
      { expression: 'dem@1 + 1', output },
    );
    // The disk fills between the check and the run, as it may under other writers.
    const filler = await disk.fill(64 * 1024);
    try {
      await assert.rejects(work(), (error: Error) => {
        assert.ok(error instanceof InsufficientStorage, String(error));
        assert.match(error.clientMessage, new RegExp(`the disk mounted at ${disk.dir} is full`));
        return true;
      });
      assert.deepEqual((await readdir(disk.dir)).sort(), [filler.split('/').at(-1), 'tiny.tif'].sort());
    } finally {
      await rm(filler, { force: true });
    }
  });

  test('a synchronous run whose client leaves is stopped: worker killed, no file left', async () => {
    const big = join(root, 'big.tif');
    const layers = new MemoryLayers({
      'public/p': [{ name: 'big', type: 'raster', source: sparseRaster(join(root, 'big-in.tif'), 20000, 20000) }],
    });
    const server = await buildApp(pino({ level: 'silent' }), [processingRoutes(new ProcessingService(layers))], {
      apiToken: undefined,
    });
    await server.listen({ host: '127.0.0.1', port: 0 });
    const address = server.server.address() as { port: number };
    const before = new Set(await children());
    const client = new AbortController();
    const request = fetch(`http://127.0.0.1:${address.port}/api/processing/raster/calculator/p`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ expression: 'big@1 + 1', output: big }),
      signal: client.signal,
    }).catch((error: Error) => error);
    try {
      const workFile = async () =>
        (await readdir(root)).find((name) => name.startsWith('.big.tif.') && name.endsWith('.work'));
      await until('the worker writes its work file', async () => (await workFile()) !== undefined);
      const workers = (await children()).filter((pid) => !before.has(pid));
      assert.ok(workers.length > 0, 'a worker process computes');
      client.abort();
      assert.ok((await request) instanceof Error);
      await until('the worker is gone', async () => {
        const now = new Set(await children());
        return workers.every((pid) => !now.has(pid));
      });
      await until('the work file is removed', async () => (await workFile()) === undefined);
      await assert.rejects(stat(big), 'no output');
    } finally {
      await server.close();
    }
  });
});
