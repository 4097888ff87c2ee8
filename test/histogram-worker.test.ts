/**
 * The API computes histograms in a GDAL worker process: its event loop answers other requests
 * meanwhile, and a client that goes away stops the work. The worker is held with SIGSTOP where
 * the order of answers is checked, so that it holds on a machine of any speed.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { configureGdalMemory } from '../src/gdal/gdal-memory.js';
import { computeHistogram } from '../src/gdal/histogram.js';
import { processAlive } from '../src/runtime/process-alive.js';
import { type ApiProcess, startApiProcess } from './support/api-process.js';
import { gdalWorkers, threadNiceness } from './support/gdal-workers.js';
import { after, before, describe, test } from './support/node-test.js';
import { scratchFolder, writeRaster } from './support/rasters.js';
import { waitFor } from './support/wait.js';

configureGdalMemory();

const HEALTH_REQUESTS = 1000;
const HISTOGRAM_PATH = '/api/processing/raster/histogram/site/big';
const TWIN_HISTOGRAM_PATH = '/api/processing/raster/histogram/site/twin';

/** Long enough for a worker process to start through tsx on a busy machine. */
const WAIT_MS = 20_000;

describe('a histogram asked of the API', () => {
  let folder: Awaited<ReturnType<typeof scratchFolder>>;
  let api: ApiProcess;
  let source: string;

  const askHistogram = (body: unknown = {}): Promise<Response> =>
    fetch(`${api.url}${HISTOGRAM_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  /** The one worker process the API keeps ready after a task, once the task's own has exited. */
  const spareWorker = (): Promise<number> =>
    waitFor(
      'the API to keep one worker ready',
      () => {
        const workers = gdalWorkers(api.pid);
        return workers.length === 1 ? workers[0] : undefined;
      },
      WAIT_MS,
    );

  before(async () => {
    folder = await scratchFolder('steward-histogram-worker-');
    source = writeRaster(join(folder.dir, 'big.tif'), {
      type: 'Float32',
      width: 4096,
      height: 4096,
      tile: 256,
      value: (x, y) => ((x * 7 + y * 13) % 1000) / 4,
    });
    api = await startApiProcess({
      STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/',
      STEWARD_QGISSERVER_PROJECTS_DIR: join(folder.dir, 'projects'),
    });
    assert.equal((await api.call('POST', '/api/projects/', { name: 'site', author: 'test' })).status, 201);
    for (const name of ['big', 'twin']) {
      const layer = await api.call('POST', '/api/projects/site/layers', { type: 'raster', name, datasource: source });
      assert.ok(layer.status < 300, JSON.stringify(layer.body));
    }
    // The first task starts the worker the API keeps ready for the next ones.
    const first = await askHistogram({ count: 10 });
    assert.equal(first.status, 200);
    assert.deepEqual(await first.json(), await computeHistogram(source, { count: 10 }));
  });
  after(async () => {
    await api.kill();
    await folder.remove();
  });

  test('is computed in a worker process while the API answers other requests', async () => {
    const worker = await spareWorker();
    await waitFor(
      'the spare to wait behind the API',
      () => threadNiceness(worker).every((nice) => nice === 10),
      WAIT_MS,
    );
    process.kill(worker, 'SIGSTOP');
    let histogramAnswered = false;
    let histogram: Promise<Response> | undefined;
    try {
      histogram = askHistogram().then((reply) => {
        histogramAnswered = true;
        return reply;
      });
      for (let i = 0; i < HEALTH_REQUESTS; i++) {
        const live = await fetch(`${api.url}/health/live`);
        assert.equal(live.status, 200);
        await live.arrayBuffer();
        assert.equal(histogramAnswered, false, `the histogram was answered before health check ${i + 1}`);
      }
    } finally {
      process.kill(worker, 'SIGCONT');
    }
    const reply = await histogram;
    assert.equal(reply.status, 200);
    assert.deepEqual(await reply.json(), await computeHistogram(source));
  });

  test('stops its worker process when the client goes away, and the next one is answered', async () => {
    const worker = await spareWorker();
    process.kill(worker, 'SIGSTOP');
    try {
      // Only this request asks for layer twin, so the log shows when it came in.
      const asked = request(`${api.url}${TWIN_HISTOGRAM_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      });
      asked.on('error', () => {
        // The request is destroyed below, on purpose.
      });
      asked.end('{}');
      await waitFor('the API to log the request', () => api.log().includes(TWIN_HISTOGRAM_PATH), WAIT_MS);
      // The route reads the project and hands the task over in well under this.
      await sleep(500);
      asked.destroy();
      await waitFor('the worker process to be stopped', () => !processAlive(worker), WAIT_MS);
    } finally {
      if (processAlive(worker)) process.kill(worker, 'SIGCONT');
    }
    const next = await askHistogram({ count: 10 });
    assert.equal(next.status, 200);
    assert.deepEqual(await next.json(), await computeHistogram(source, { count: 10 }));
  });
});
