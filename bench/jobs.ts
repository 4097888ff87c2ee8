/**
 * Reads under long work: while the API runs a calculator job that writes about 256 MB to object
 * storage (a local S3 server), clients read a layer over and over; the 95th percentile of those
 * reads must stay under 5 ms. The API runs as a process of its own, as in production; the reads
 * are also timed before the job, for comparison.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { configureObjectStorage } from '../src/gdal/s3.js';
import { readS3Settings } from '../src/s3-settings.js';
import { startApiProcess } from '../test/support/api-process.js';
import { startS3Process } from '../test/support/s3-process.js';
import { ms, summarise, table } from './stats.js';

/** 8192 x 8192 Float32 of noise: 256 MiB of pixels, which ZSTD barely shrinks (random mantissas). */
const SIZE = 8192;
/** Clients reading at once: few, so that a read's time is the server's and not a queue behind the others. */
const READERS = 2;
const TARGET_MS = 5;
const BASELINE_MS = 5_000;

function writeNoise(path: string): void {
  const dataset = gdal.drivers.get('GTiff').create(path, SIZE, SIZE, 1, 'Float32', ['TILED=YES']);
  dataset.geoTransform = [500000, 10, 0, 4000000, 0, -10];
  dataset.srs = gdal.SpatialReference.fromEPSG(32631);
  const rows = 512;
  const pixels = new Float32Array(SIZE * rows);
  let state = 7;
  for (let y = 0; y < SIZE; y += rows) {
    for (let i = 0; i < pixels.length; i++) {
      // mulberry32: every bit of the mantissa changes from pixel to pixel.
      state = (state + 0x6d2b79f5) >>> 0;
      let t = Math.imul(state ^ (state >>> 15), state | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      pixels[i] = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    }
    dataset.bands.get(1).pixels.write(0, y, SIZE, rows, pixels);
  }
  dataset.close();
}

/** Reads `url` from `READERS` clients in turn until `running()` is false; the latency of each read in ms. */
async function readWhile(url: string, running: () => boolean): Promise<number[]> {
  const samples: number[] = [];
  const reader = async (): Promise<void> => {
    while (running()) {
      const start = performance.now();
      const reply = await fetch(url);
      await reply.arrayBuffer();
      samples.push(performance.now() - start);
      if (reply.status !== 200) throw new Error(`read answered ${reply.status}`);
    }
  };
  await Promise.all(Array.from({ length: READERS }, reader));
  return samples;
}

interface JobState {
  state: string;
  error: string | null;
}

async function jobEnded(url: string): Promise<JobState> {
  const job = (await (await fetch(url)).json()) as JobState;
  return job;
}

export async function runJobsBench(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'steward-bench-jobs-'));
  const s3 = await startS3Process('rasters');
  configureObjectStorage(readS3Settings(s3.env));
  const api = await startApiProcess({
    ...s3.env,
    STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/',
    STEWARD_QGISSERVER_PROJECTS_DIR: join(folder, 'projects'),
  });
  try {
    const source = join(folder, 'noise.tif');
    writeNoise(source);
    await api.call('POST', '/api/projects/', { name: 'bench', author: 'bench' });
    await api.call('POST', '/api/projects/bench/layers', { type: 'raster', name: 'noise', datasource: source });
    const layerUrl = `${api.url}/api/projects/bench/layers/noise`;
    const baseStart = performance.now();
    const baseline = summarise(await readWhile(layerUrl, () => performance.now() - baseStart < BASELINE_MS));
    const output = '/vsis3/rasters/bench/noise-out.tif';
    const start = performance.now();
    const reply = await fetch(`${api.url}/api/processing/raster/calculator/bench`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ expression: 'noise@1 * 2', output }),
    });
    if (reply.status !== 202) throw new Error(`the calculator answered ${reply.status}: ${await reply.text()}`);
    const jobUrl = `${api.url}${reply.headers.get('location') ?? ''}`;
    let job: JobState = { state: 'queued', error: null };
    const watch = (async () => {
      while (!['succeeded', 'failed', 'cancelled'].includes(job.state)) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        job = await jobEnded(jobUrl);
      }
    })();
    const samples = await readWhile(layerUrl, () => !['succeeded', 'failed', 'cancelled'].includes(job.state));
    await watch;
    const jobMs = performance.now() - start;
    if (job.state !== 'succeeded') throw new Error(`the calculator job ${job.state}: ${job.error}`);
    const size = gdal.fs.stat(output).size;
    const during = summarise(samples);
    const worst = Math.max(...samples);
    return [
      '## Reads during a job',
      '',
      `A calculator job (\`noise@1 * 2\` over ${SIZE} x ${SIZE} Float32 noise) writes its output to a local S3 server through the API (\`Prefer: respond-async\`), while ${READERS} clients read \`GET /api/projects/bench/layers/noise\` one request after another. The computation and the upload run in worker processes.`,
      '',
      table(
        ['Reads', 'Count', 'Median', 'p95', 'Max', 'Target'],
        [
          ['before the job', '-', `${ms(baseline.median)} ms`, `${ms(baseline.p95)} ms`, '-', '-'],
          [
            `during the job (${(jobMs / 1000).toFixed(1)} s, output ${(size / 2 ** 20).toFixed(0)} MiB)`,
            String(samples.length),
            `${ms(during.median)} ms`,
            `${ms(during.p95)} ms`,
            `${ms(worst)} ms`,
            `p95 < ${TARGET_MS} ms: ${during.p95 < TARGET_MS ? 'met' : 'NOT met'}`,
          ],
        ],
      ),
    ].join('\n');
  } finally {
    await api.kill();
    await s3.stop();
    await rm(folder, { recursive: true, force: true });
  }
}
