/**
 * API latency and throughput on projects of growing size, against PyQGIS reading the same project
 * and against QGIS Server answering the same GetMap directly.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import autocannon from 'autocannon';

import { type Fixtures, makeFixtures } from '../test/support/fixtures.js';
import { type Stack, startStack } from '../test/support/stack.js';
import { fillStyle } from '../test/support/write-bodies.js';
import { closeClient, send } from './http-client.js';
import { makeMapData } from './map-data.js';
import { ms, summarise, table, time, type Timing } from './stats.js';

const SIZES = [10, 100, 500, 1000];
const READ_RUNS = 100;
const WRITE_RUNS = 15;
const MAP_RUNS = 150;

async function created(stack: Stack, path: string, body: unknown): Promise<void> {
  const reply = await stack.call('POST', path, body);
  if (reply.status !== 201) throw new Error(`POST ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
}

function layerBody(data: Fixtures, index: number, name = `layer${index}`): unknown {
  return index % 2
    ? { type: 'raster', name, datasource: data.rgbTiff }
    : { type: 'vector', name, datasource: `${data.geopackage}|layername=polygons` };
}

async function fillProject(stack: Stack, data: Fixtures, name: string, size: number): Promise<void> {
  await created(stack, '/api/projects/', { name, author: 'bench' });
  for (let index = 0; index < size; index++)
    await created(stack, `/api/projects/${name}/layers`, layerBody(data, index));
  await created(stack, `/api/projects/${name}/styles`, fillStyle('teal', '#00BBBB'));
  await created(stack, `/api/projects/${name}/styles`, fillStyle('orange', '#FF8000'));
}

function pyqgisRead(projectFile: string, runs: number): { unresolved: Timing; resolved: Timing } {
  const output = execFileSync(
    '/usr/bin/python3',
    [join(import.meta.dirname, 'pyqgis_read.py'), projectFile, String(runs)],
    {
      env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const timings = JSON.parse(output) as { unresolved: number[]; resolved: number[] };
  return { unresolved: summarise(timings.unresolved), resolved: summarise(timings.resolved) };
}

interface SizeResult {
  size: number;
  reads: Record<string, Timing>;
  writes: Record<string, Timing>;
  pyqgis: { unresolved: Timing; resolved: Timing };
}

async function measureSize(stack: Stack, data: Fixtures, size: number): Promise<SizeResult> {
  const project = `bench_${size}`;
  await fillProject(stack, data, project, size);
  const base = `${stack.api.url}/api/projects/${project}`;
  const reads: Record<string, Timing> = {
    'GET project': await time(READ_RUNS, () => send(base)),
    'GET layers': await time(READ_RUNS, () => send(`${base}/layers`)),
    'GET layer': await time(READ_RUNS, () => send(`${base}/layers/layer${Math.floor(size / 2)}`)),
    'GET styles': await time(READ_RUNS, () => send(`${base}/styles`)),
  };
  let extra = 0;
  const post = await time(WRITE_RUNS, () =>
    created(stack, `/api/projects/${project}/layers`, layerBody(data, 1, `extra${extra++}`)),
  );
  let applied = 0;
  const style = await time(WRITE_RUNS, async () => {
    const name = applied++ % 2 ? 'teal' : 'orange';
    const reply = await stack.call('POST', `/api/projects/${project}/layers/layer0/style`, { name, current: true });
    if (reply.status !== 200) throw new Error(JSON.stringify(reply.body));
  });
  let removed = 0;
  const remove = await time(WRITE_RUNS, () => send(`${base}/layers/extra${removed++}`, 'DELETE'));
  const projectFile = join(stack.projectsDir, project, `${project}.qgs`);
  return {
    size,
    reads,
    writes: { 'POST layer': post, 'POST layer style': style, 'DELETE layer': remove },
    pyqgis: pyqgisRead(projectFile, size >= 500 ? 3 : 5),
  };
}

async function throughput(stack: Stack, size: number): Promise<number> {
  const result = await autocannon({
    url: `${stack.api.url}/api/projects/bench_${size}/layers/layer${Math.floor(size / 2)}`,
    connections: 16,
    duration: 8,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`throughput run had ${result.non2xx} non-2xx and ${result.errors} errors`);
  return result.requests.average;
}

interface MapComparison {
  layer: string;
  api: Timing;
  direct: Timing;
  /** Each run's API time less the direct time measured right before it. */
  added: Timing;
}

/** A layer to draw: one of the 500-layer project's, or one added to a project of its own. */
interface MapCase {
  label: string;
  project: string;
  layer: string;
  added?: unknown;
}

function mapCases(data: Fixtures): MapCase[] {
  const mapData = makeMapData(data.dir);
  return [
    { label: 'four polygons, in the 500-layer project', project: 'bench_500', layer: 'layer250' },
    { label: '64 x 64 RGB GeoTIFF, in the 500-layer project', project: 'bench_500', layer: 'layer251' },
    {
      label: '4900 parcels',
      project: 'bench_map',
      layer: 'parcels',
      added: { type: 'vector', name: 'parcels', datasource: `${mapData.parcels}|layername=parcels` },
    },
    {
      label: '4000 x 4000 RGB photo',
      project: 'bench_map',
      layer: 'photo',
      added: { type: 'raster', name: 'photo', datasource: mapData.photo },
    },
  ];
}

/**
 * Each GetMap straight to QGIS Server and then through the API, alternating, so that each pair sees
 * the same machine state; the API's cost is the median of the pairs' differences.
 */
async function mapAgainstQgis(stack: Stack, data: Fixtures): Promise<MapComparison[]> {
  await created(stack, '/api/projects/', { name: 'bench_map', author: 'bench' });
  const comparisons: MapComparison[] = [];
  for (const { label, project, layer, added } of mapCases(data)) {
    if (added) await created(stack, `/api/projects/${project}/layers`, added);
    const route = `${stack.api.url}/api/projects/${project}/layers/${layer}/map`;
    const { url } = (await stack.call('GET', `/api/projects/${project}/layers/${layer}/map/url`)).body as {
      url: string;
    };
    // QGIS Server reads the project on its first GetMap of it, the API builds the URL on its first.
    await send(url);
    await send(route);
    const api: number[] = [];
    const direct: number[] = [];
    for (let run = 0; run < MAP_RUNS; run++) {
      for (const [target, samples] of [
        [url, direct],
        [route, api],
      ] as const) {
        const start = performance.now();
        await send(target);
        samples.push(performance.now() - start);
      }
    }
    const differences = api.map((time, run) => time - (direct[run] ?? Number.NaN));
    comparisons.push({ layer: label, api: summarise(api), direct: summarise(direct), added: summarise(differences) });
  }
  return comparisons;
}

/** Peak RSS of a fresh API process after reading 100 projects of 100 layers each. */
async function peakMemory(stack: Stack): Promise<number> {
  const projectsDir = mkdtempSync(join(tmpdir(), 'steward-bench-memory-'));
  for (let copy = 0; copy < 100; copy++) {
    cpSync(join(stack.projectsDir, 'bench_100'), join(projectsDir, `p${copy}`), { recursive: true });
    cpSync(join(stack.projectsDir, 'bench_100', 'bench_100.qgs'), join(projectsDir, `p${copy}`, `p${copy}.qgs`));
  }
  // The compiled child, as the service runs in production (tsx alone adds ~50 MB of its own).
  const compiledChild = join(import.meta.dirname, '..', 'dist', 'bench', 'memory-child.js');
  const child = spawn(process.execPath, [compiledChild, projectsDir, stack.qgis.url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise((resolve) => child.on('exit', resolve));
  return Number(output.trim());
}

export async function runApiBench(): Promise<string> {
  const data = makeFixtures();
  const stack = await startStack();
  try {
    const results: SizeResult[] = [];
    for (const size of SIZES) results.push(await measureSize(stack, data, size));
    const rows = results.flatMap((result) => {
      const reference = result.pyqgis.unresolved.median;
      return [
        ...Object.entries(result.reads).map(([name, timing]) => [
          String(result.size),
          name,
          ms(timing.median),
          ms(timing.p95),
          `${(reference / timing.median).toFixed(0)}x faster than PyQGIS read (${ms(reference)} ms unresolved, ${ms(result.pyqgis.resolved.median)} ms resolved)`,
        ]),
        ...Object.entries(result.writes).map(([name, timing]) => [
          String(result.size),
          name,
          ms(timing.median),
          ms(timing.p95),
          `${(reference / timing.median).toFixed(1)}x faster than PyQGIS read alone`,
        ]),
      ];
    });
    const small = results[0]?.reads['GET layer']?.median ?? Number.NaN;
    const large = results[results.length - 1]?.reads['GET layer']?.median ?? Number.NaN;
    const rps = await throughput(stack, 500);
    const maps = await mapAgainstQgis(stack, data);
    const rss = await peakMemory(stack);
    return [
      '## API latency (ms) against PyQGIS reading the same project',
      table(['layers', 'request', 'median', 'p95', 'reference'], rows),
      '',
      `GET layer at 1000 layers / at 10 layers: ${(large / small).toFixed(2)} (target: within 2)`,
      '',
      '## Throughput',
      table(
        ['request', 'requests/s', 'target'],
        [['GET layer, 500-layer project, 16 connections', rps.toFixed(0), '>= 2000']],
      ),
      '',
      '## GET .../map against the same GetMap sent to QGIS Server directly (400 x 400 PNG)',
      `${MAP_RUNS} pairs per layer, each a direct GetMap and then the API's; "added" is the median of the pairs' differences, against the direct median.`,
      '',
      table(
        ['layer', 'API /map median', 'direct median', 'API p95', 'direct p95', 'added by the API', 'target'],
        maps.map((map) => [
          map.layer,
          ms(map.api.median),
          ms(map.direct.median),
          ms(map.api.p95),
          ms(map.direct.p95),
          `+${ms(map.added.median)} ms (${((map.added.median / map.direct.median) * 100).toFixed(1)}%)`,
          map.added.median <= map.direct.median * 0.05 ? 'within 5%: met' : 'within 5%: not met',
        ]),
      ),
      '',
      '## Memory',
      table(
        ['measure', 'MB', 'target'],
        [['peak RSS after reading 100 projects of 100 layers', (rss / 1024).toFixed(0), '< 300']],
      ),
    ].join('\n');
  } finally {
    closeClient();
    await stack.stop();
  }
}
