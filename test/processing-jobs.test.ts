import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

import type { FastifyInstance } from 'fastify';
import gdal from 'gdal-async';

import { Conflict } from '../src/errors.js';
import { configureGdalMemory } from '../src/gdal/gdal-memory.js';
import { processingRoutes } from '../src/http/routes/processing.js';
import { FilesystemJobStore } from '../src/jobs/filesystem-jobs.js';
import { type JobRecord } from '../src/jobs/record.js';
import { JobService } from '../src/jobs/service.js';
import { ProcessingService } from '../src/services/processing.js';
import { type ApiProcess, startApiProcess } from './support/api-process.js';
import { gdalWorkers, threadNiceness } from './support/gdal-workers.js';
import { after, afterEach, before, describe, test } from './support/node-test.js';
import { bareApp, MemoryLayers } from './support/processing-app.js';
import { scratchFolder, seededRandom, writeRaster } from './support/rasters.js';
import { type JobReply, waitForJob } from './support/seeding.js';
import { waitFor } from './support/wait.js';

configureGdalMemory();
const run = promisify(execFile);

/** The job store, keeping every progress it was asked to save. */
class RecordingStore extends FilesystemJobStore {
  readonly progress = new Map<string, Array<[number, number]>>();

  override async update(id: string, change: (job: JobRecord) => JobRecord | undefined): Promise<JobRecord | undefined> {
    const updated = await super.update(id, change);
    if (updated?.state === 'running') {
      const seen = this.progress.get(id) ?? [];
      seen.push([updated.done, updated.total]);
      this.progress.set(id, seen);
    }
    return updated;
  }
}

/** Every band's pixels of a raster, or of one of its overview levels. */
function pixels(path: string, overview?: number): Float64Array {
  const dataset = gdal.open(path);
  try {
    const full = dataset.bands.get(1);
    const band = overview === undefined ? full : full.overviews.get(overview);
    const { x, y } = band.size;
    return Float64Array.from(band.pixels.read(0, 0, x, y) as ArrayLike<number>);
  } finally {
    dataset.close();
  }
}

function assertMoved(progress: Array<[number, number]> | undefined): void {
  assert.ok(progress && progress.length > 0, 'progress was saved');
  const between = progress.filter(([done, total]) => total > 0 && done > 0 && done < total);
  assert.ok(between.length >= 2, `progress moved through the work: ${JSON.stringify(progress)}`);
  for (let i = 1; i < progress.length; i++) {
    assert.ok((progress[i]?.[0] ?? 0) >= (progress[i - 1]?.[0] ?? 0), 'progress never goes back');
  }
}

describe('processing with Prefer: respond-async', () => {
  let folder: Awaited<ReturnType<typeof scratchFolder>>;
  let app: FastifyInstance;
  let store: RecordingStore;
  let jobs: JobService;
  const path = (name: string): string => join(folder.dir, name);

  const post = (url: string, payload: unknown, prefer?: string) =>
    app.inject({
      method: 'POST',
      url,
      payload: payload as object,
      headers: prefer === undefined ? {} : { prefer },
    });
  const untilJob = (id: string, there: (job: JobRecord) => boolean): Promise<JobRecord> =>
    waitFor(
      `job ${id} to get there`,
      async () => {
        const job = await jobs.get(id);
        return there(job) && job;
      },
      24_000,
      20,
    );
  const ended = (job: JobRecord): boolean => ['succeeded', 'failed', 'cancelled'].includes(job.state);

  before(async () => {
    folder = await scratchFolder('steward-proc-jobs-');
    const random = seededRandom(5);
    // 2048 x 4096 pixels: 32 windows of the calculator.
    const grid = { width: 2048, height: 4096 };
    writeRaster(path('a.tif'), { ...grid, type: 'Float32', noData: -9999, tile: 256, value: () => random() * 100 });
    writeRaster(path('b.tif'), { ...grid, type: 'Int16', value: (x, y) => (x + y) % 500 });
    // Large enough that a cancel comes while it is computed.
    const big = { width: 6144, height: 6144 };
    writeRaster(path('big.tif'), { ...big, type: 'Float32', tile: 256, value: (x, y) => (x * y) % 1000 });
    writeRaster(path('photo.tif'), { ...big, type: 'Byte', tile: 256, value: (x, y) => (x ^ y) & 255 });
    await copyFile(path('photo.tif'), path('photo-cancel.tif'));
    await copyFile(path('photo.tif'), path('photo-reference.tif'));
    const layers = new MemoryLayers({
      'public/site': [
        { name: 'a', type: 'raster', source: path('a.tif') },
        { name: 'b', type: 'raster', source: path('b.tif') },
        { name: 'big', type: 'raster', source: path('big.tif') },
        { name: 'photo', type: 'raster', source: path('photo.tif') },
        { name: 'photo-cancel', type: 'raster', source: path('photo-cancel.tif') },
        { name: 'roads', type: 'vector', source: path('roads.gpkg') },
      ],
    });
    store = new RecordingStore(folder.dir);
    jobs = new JobService(store, { concurrency: 2, withSchema: false, progressWriteMs: 1 });
    await jobs.start();
    app = await bareApp(processingRoutes(new ProcessingService(layers), jobs));
  });
  after(async () => {
    await jobs.close();
    await app.close();
    await folder.remove();
  });

  test('answers 202 with the calculator job, whose progress moves and whose output equals the one made at once', async () => {
    const expression = 'a@1 * 2 + b@1';
    const now = await post('/api/processing/raster/calculator/site', { expression, output: path('now.tif') });
    assert.equal(now.statusCode, 201, now.body);
    assert.equal(now.headers['preference-applied'], undefined);
    const reply = await post(
      '/api/processing/raster/calculator/site',
      { expression, output: path('later.tif') },
      'wait=10, respond-async',
    );
    assert.equal(reply.statusCode, 202, reply.body);
    const job = reply.json<JobReply & { kind: string }>();
    assert.equal(reply.headers['location'], `/api/jobs/${job.id}`);
    assert.equal(reply.headers['preference-applied'], 'respond-async');
    assert.equal(job.kind, 'calculator');
    const done = await untilJob(job.id, ended);
    assert.equal(done.state, 'succeeded', done.error ?? '');
    assert.deepEqual(done.result, { output: path('later.tif'), width: 2048, height: 4096 });
    // 2048 x 4096 pixels in windows of 256 Ki pixels (2048 x 128).
    assert.deepEqual([done.progress, done.done, done.total], [1, 32, 32]);
    assertMoved(store.progress.get(job.id));
    const [made, expected] = [pixels(path('later.tif')), pixels(path('now.tif'))];
    assert.ok(
      Buffer.from(made.buffer).equals(Buffer.from(expected.buffer)),
      'the same pixels as the request answered at once',
    );
    const a = pixels(path('a.tif'));
    const b = pixels(path('b.tif'));
    for (const i of [0, 1, 4097, 2048 * 4096 - 1])
      assert.ok(Math.abs((made[i] ?? 0) - ((a[i] ?? 0) * 2 + (b[i] ?? 0))) < 1e-3, `pixel ${i}`);
  });

  test('checks the request before making a job: a bad expression is 400 at once, with no job', async () => {
    const before = (await jobs.list({})).length;
    const reply = await post(
      '/api/processing/raster/calculator/site',
      { expression: 'a@1 + nowhere@1', output: path('never.tif') },
      'respond-async',
    );
    assert.equal(reply.statusCode, 400, reply.body);
    assert.equal((await jobs.list({})).length, before);
  });

  test('a cancelled calculator job stops and leaves no output, nor any work file', async () => {
    const files = (await readdir(folder.dir)).sort();
    const output = path('cancelled.tif');
    const reply = await post(
      '/api/processing/raster/calculator/site',
      { expression: 'sqrt(big@1) * 3', output },
      'respond-async',
    );
    assert.equal(reply.statusCode, 202, reply.body);
    const { id } = reply.json<JobReply>();
    await untilJob(id, (job) => job.done >= 1 || ended(job));
    const cancelled = await jobs.cancel(id);
    assert.equal(cancelled.state, 'cancelled');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const after = (await readdir(folder.dir)).filter((name) => name !== '.jobs').sort();
    assert.deepEqual(
      after,
      files.filter((name) => name !== '.jobs'),
      'nothing was left beside the inputs',
    );
    await assert.rejects(jobs.cancel(id), Conflict);
  });

  test('builds overviews as a job, with GDAL progress, equal to gdaladdo', async () => {
    const reply = await post('/api/processing/raster/overviews/site/photo', undefined, 'respond-async');
    assert.equal(reply.statusCode, 202, reply.body);
    const job = reply.json<JobReply & { kind: string }>();
    assert.equal(job.kind, 'overviews');
    const done = await untilJob(job.id, ended);
    assert.equal(done.state, 'succeeded', done.error ?? '');
    assert.deepEqual(done.result, {
      layer: 'photo',
      datasource: path('photo.tif'),
      factors: [2, 4, 8, 16, 32],
      file: `${path('photo.tif')}.ovr`,
    });
    assertMoved(store.progress.get(job.id));
    await run('gdaladdo', ['-ro', '-r', 'average', path('photo-reference.tif'), '2', '4', '8', '16', '32']);
    for (let level = 0; level < 5; level++) {
      const [made, expected] = [pixels(path('photo.tif'), level), pixels(path('photo-reference.tif'), level)];
      assert.ok(Buffer.from(made.buffer).equals(Buffer.from(expected.buffer)), `overview level ${level}`);
    }
    const again = await post('/api/processing/raster/overviews/site/photo', undefined);
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json(), { layer: 'photo', datasource: path('photo.tif'), factors: [2, 4, 8, 16, 32] });
  });

  test('a cancelled overview job leaves no .ovr, and the raster has no overviews', async () => {
    const reply = await post('/api/processing/raster/overviews/site/photo-cancel', undefined, 'respond-async');
    assert.equal(reply.statusCode, 202, reply.body);
    const { id } = reply.json<JobReply>();
    await untilJob(id, (job) => job.state !== 'queued');
    const cancelled = await jobs.cancel(id);
    assert.equal(cancelled.state, 'cancelled');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.ok(!(await readdir(folder.dir)).includes('photo-cancel.tif.ovr'));
    const dataset = gdal.open(path('photo-cancel.tif'));
    assert.equal(dataset.bands.get(1).overviews.count(), 0);
    dataset.close();
  });

  test('refuses overviews of a vector layer (400) and of an unknown layer (404), with no job', async () => {
    const before = (await jobs.list({})).length;
    assert.equal(
      (await post('/api/processing/raster/overviews/site/roads', undefined, 'respond-async')).statusCode,
      400,
    );
    assert.equal(
      (await post('/api/processing/raster/overviews/site/nope', undefined, 'respond-async')).statusCode,
      404,
    );
    assert.equal((await jobs.list({})).length, before);
  });
});

describe('an API process that starts while another computes', () => {
  let folder: Awaited<ReturnType<typeof scratchFolder>>;
  let env: Record<string, string>;
  let projects: string;
  const apis: ApiProcess[] = [];

  /** Asks `api` for the calculation of `expression` into `output` over project site's layers, as a job. */
  const calculateAsJob = async (api: ApiProcess, expression: string, output: string): Promise<JobReply> => {
    const reply = await fetch(`${api.url}/api/processing/raster/calculator/site`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ expression, output }),
    });
    assert.equal(reply.status, 202);
    return (await reply.json()) as JobReply;
  };
  const start = async (): Promise<ApiProcess> => {
    const api = await startApiProcess(env);
    apis.push(api);
    return api;
  };

  before(async () => {
    folder = await scratchFolder('steward-proc-restart-');
    projects = join(folder.dir, 'projects');
    env = { STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/', STEWARD_QGISSERVER_PROJECTS_DIR: projects };
    const source = writeRaster(join(folder.dir, 'big.tif'), {
      type: 'Float32',
      width: 6144,
      height: 6144,
      tile: 256,
      value: (x, y) => (x + y) % 777,
    });
    const api = await startApiProcess(env);
    assert.equal((await api.call('POST', '/api/projects/', { name: 'site', author: 'test' })).status, 201);
    const layer = await api.call('POST', '/api/projects/site/layers', {
      type: 'raster',
      name: 'big',
      datasource: source,
    });
    assert.ok(layer.status < 300, JSON.stringify(layer.body));
    await api.kill();
  });
  afterEach(async () => {
    await Promise.all(apis.splice(0).map((api) => api.kill()));
  });
  after(async () => {
    await folder.remove();
  });

  test('of a killed API reports its job failed, and a new one runs', async () => {
    const first = await start();
    const killed = await calculateAsJob(first, 'big@1 / 2', join(folder.dir, 'killed.tif'));
    await waitForJob(
      (...args) => first.call(...args),
      killed.id,
      (job) => job.done >= 1 || job.state !== 'running',
    );
    await first.kill();
    const restarted = await start();
    const failed = await waitForJob((...args) => restarted.call(...args), killed.id);
    assert.equal(failed.state, 'failed');
    assert.match(failed.error ?? '', /stopped before the job ended/);
    assert.ok(!(await readdir(folder.dir)).includes('killed.tif'));
    const next = await calculateAsJob(restarted, 'big@1 / 2', join(folder.dir, 'next.tif'));
    const done = await waitForJob((...args) => restarted.call(...args), next.id);
    assert.equal(done.state, 'succeeded', done.error ?? '');
    assert.ok((await readdir(folder.dir)).includes('next.tif'));
  });

  test("leaves a live calculation's work file in a project's folder, and the calculation completes", async () => {
    const computing = await start();
    const site = join(projects, 'site');
    const output = join(site, 'half.tif');
    const workFiles = async () => (await readdir(site)).filter((entry) => entry.startsWith('.half.tif.'));
    const job = await calculateAsJob(computing, 'big@1 / 2', output);
    while ((await workFiles()).length === 0) await sleep(2);
    // Its worker process waits meanwhile, so that the calculation is still running when the other starts.
    const workers = gdalWorkers(computing.pid);
    for (const pid of workers) process.kill(pid, 'SIGSTOP');
    try {
      const running = await computing.call('GET', `/api/jobs/${job.id}`);
      assert.equal((running.body as JobReply).state, 'running', JSON.stringify(running.body));
      assert.ok(workers.length > 0, 'the API computes in a worker process');
      for (const pid of workers)
        assert.deepEqual(new Set(threadNiceness(pid)), new Set([10]), 'every thread computes behind the API');
      assert.equal((await workFiles()).length, 1, 'the calculation writes its work file beside the output');
      await start();
      assert.equal((await workFiles()).length, 1, 'the other process left the work file alone');
    } finally {
      for (const pid of workers) process.kill(pid, 'SIGCONT');
    }
    const done = await waitForJob((...args) => computing.call(...args), job.id);
    assert.equal(done.state, 'succeeded', done.error ?? '');
    assert.deepEqual(await workFiles(), []);
    const dataset = gdal.open(output);
    try {
      assert.deepEqual(Array.from(dataset.bands.get(1).pixels.read(6000, 100, 2, 1) as ArrayLike<number>), [
        (6100 % 777) / 2,
        (6101 % 777) / 2,
      ]);
    } finally {
      dataset.close();
    }
  });
});
