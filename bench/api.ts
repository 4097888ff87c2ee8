/**
 * API latency and throughput on projects of growing size, against PyQGIS reading the same project
 * and against QGIS Server answering the same GetMap directly.
 */
import { execFileSync, spawn } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

import autocannon from 'autocannon';

import { type Fixtures, makeFixtures } from '../test/support/fixtures.js';
import { type Stack, startStack } from '../test/support/stack.js';
import { fillStyle } from '../test/support/write-bodies.js';
import { type BareProxy, startBareProxy } from './bare-proxy.js';
import { closeClient, send } from './http-client.js';
import { makeMapData } from './map-data.js';
import { fastcgiMapReport, mapOverFastcgi } from './map-fastcgi.js';
import { mapThroughPassthrough, passthroughReport } from './map-passthrough.js';
import { EVERY_PART, type PartFilter } from './parts.js';
import { ms, sample, summarise, table, time, type Timing } from './stats.js';

const SIZES = [10, 100, 500, 1000];
const READ_RUNS = 100;
const WRITE_RUNS = 15;
const MAP_RUNS = 150;
/** The share of QGIS Server's own time a map may add (the target counts the smallest map). */
const MAP_COST = 0.02;
/** What going through Fastify may add to a map before the passthrough in front of it pays (issue 44), ms. */
const PASSTHROUGH_LIMIT_MS = 0.1;
const PASSTHROUGH_RUNS = 1000;

/** Whatever sends requests to the API: the in-process stack or an API process. */
export type Caller = Pick<Stack, 'call'>;

export async function created(stack: Caller, path: string, body: unknown): Promise<void> {
  const reply = await stack.call('POST', path, body);
  if (reply.status !== 201) throw new Error(`POST ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
}

export function layerBody(data: Fixtures, index: number, name = `layer${index}`): unknown {
  return index % 2
    ? { type: 'raster', name, datasource: data.rgbTiff }
    : { type: 'vector', name, datasource: `${data.geopackage}|layername=polygons` };
}

export async function fillProject(stack: Caller, data: Fixtures, name: string, size: number): Promise<void> {
  await created(stack, '/api/projects/', { name, author: 'bench' });
  for (let index = 0; index < size; index++)
    await created(stack, `/api/projects/${name}/layers`, layerBody(data, index));
  await created(stack, `/api/projects/${name}/styles`, fillStyle('teal', '#00BBBB'));
  await created(stack, `/api/projects/${name}/styles`, fillStyle('orange', '#FF8000'));
}

export function pyqgisRead(projectFile: string, runs: number): { unresolved: Timing; resolved: Timing } {
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

/** Adding a layer, changing a layer's current style and removing a layer, over HTTP, `runs` times each: each one's time. */
export async function writeSamples(
  stack: Caller,
  apiUrl: string,
  data: Fixtures,
  project: string,
  runs: number,
): Promise<Record<string, number[]>> {
  let extra = 0;
  const post = await sample(runs, () =>
    created(stack, `/api/projects/${project}/layers`, layerBody(data, 1, `extra${extra++}`)),
  );
  let applied = 0;
  const style = await sample(runs, async () => {
    const name = applied++ % 2 ? 'teal' : 'orange';
    const reply = await stack.call('POST', `/api/projects/${project}/layers/layer0/style`, { name, current: true });
    if (reply.status !== 200) throw new Error(JSON.stringify(reply.body));
  });
  let removed = 0;
  const remove = await sample(runs, () => send(`${apiUrl}/api/projects/${project}/layers/extra${removed++}`, 'DELETE'));
  return { 'POST layer': post, 'POST layer style': style, 'DELETE layer': remove };
}

interface TreeNodeBody {
  type: string;
  name: string;
  children?: TreeNodeBody[];
}

/**
 * Replacing the layer tree `runs` times, over HTTP: in turn the tree as read, and its first half
 * of layers moved into a group, so that every PUT moves half the layers.
 */
export async function treeSamples(apiUrl: string, project: string, runs: number): Promise<number[]> {
  const url = `${apiUrl}/api/projects/${project}/tree`;
  const flat = JSON.parse((await send(url)).toString('utf8')) as { children: TreeNodeBody[] };
  const half = Math.floor(flat.children.length / 2);
  const grouped = {
    children: [{ type: 'group', name: 'half', children: flat.children.slice(0, half) }, ...flat.children.slice(half)],
  };
  let put = 0;
  return sample(runs, () => send(url, 'PUT', undefined, put++ % 2 ? flat : grouped));
}

/** The writes of `writeSamples` and `treeSamples`, WRITE_RUNS times each. */
async function timeWrites(stack: Stack, data: Fixtures, project: string): Promise<Record<string, Timing>> {
  const samples = await writeSamples(stack, stack.api.url, data, project, WRITE_RUNS);
  samples['PUT tree'] = await treeSamples(stack.api.url, project, WRITE_RUNS);
  return Object.fromEntries(Object.entries(samples).map(([name, times]) => [name, summarise(times)]));
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
    'GET tree': await time(READ_RUNS, () => send(`${base}/tree`)),
  };
  const projectFile = join(stack.projectsDir, project, `${project}.qgs`);
  return {
    size,
    reads,
    writes: await timeWrites(stack, data, project),
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
  /** The same for a bare Node proxy (bench/bare-proxy.ts): what the extra hop costs by itself. */
  floor: Timing;
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
 * Each GetMap straight to QGIS Server, then through the API, then through a bare Node proxy,
 * in turn, so that each round sees the same machine state; the API's cost is the median of the
 * rounds' differences, and the bare proxy's the least any proxy in Node would add.
 */
async function mapAgainstQgis(stack: Stack, data: Fixtures): Promise<MapComparison[]> {
  await created(stack, '/api/projects/', { name: 'bench_map', author: 'bench' });
  const bare = await startBareProxy(stack.qgis.url);
  try {
    const comparisons: MapComparison[] = [];
    for (const mapCase of mapCases(data)) comparisons.push(await mapAgainstQgisFor(stack, mapCase, bare));
    return comparisons;
  } finally {
    await bare.close();
  }
}

async function mapAgainstQgisFor(
  stack: Stack,
  { label, project, layer, added }: MapCase,
  bare: BareProxy,
): Promise<MapComparison> {
  if (added) await created(stack, `/api/projects/${project}/layers`, added);
  const route = `${stack.api.url}/api/projects/${project}/layers/${layer}/map`;
  const { url } = (await stack.call('GET', `/api/projects/${project}/layers/${layer}/map/url`)).body as {
    url: string;
  };
  const proxied = bare.through(url);
  // QGIS Server reads the project on its first GetMap of it, the API builds the URL on its first.
  await send(url);
  await send(route);
  await send(proxied);
  const api: number[] = [];
  const direct: number[] = [];
  const floor: number[] = [];
  for (let run = 0; run < MAP_RUNS; run++) {
    for (const [target, samples] of [
      [url, direct],
      [route, api],
      [proxied, floor],
    ] as const) {
      const start = performance.now();
      await send(target);
      samples.push(performance.now() - start);
    }
  }
  const less = (samples: number[]): Timing => summarise(samples.map((time, run) => time - (direct[run] ?? Number.NaN)));
  return { layer: label, api: summarise(api), direct: summarise(direct), added: less(api), floor: less(floor) };
}

/** What a fresh API process measured after reading every project of a folder once. */
export interface ProjectsMemory {
  /** Peak RSS of the process that serves, KiB. */
  peak: number;
  /** Peak RSS of the launcher that bounded its heap (0 without one), KiB. */
  launcherPeak: number;
  /** Median time of GET /api/projects, ms. */
  list: number;
  /** Median time of a project's first GET .../layers, which parses it, ms. */
  firstRead: number;
}

/** `source`'s files linked into `target` (made), folder by folder; `rename` names each file there. */
function linkTree(source: string, target: string, rename: (file: string) => string): void {
  mkdirSync(target);
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    // Hidden files are no part of a project: temporary files of a write that just ended, for one.
    if (entry.name.startsWith('.')) continue;
    const from = join(source, entry.name);
    if (entry.isDirectory()) linkTree(from, join(target, entry.name), (file) => file);
    else linkSync(from, join(target, rename(entry.name)));
  }
}

/**
 * Copies of the project folder `source` (named like its .qgs), `count` of them, in a fresh folder
 * of the same file system: each file is a hard link, so that 10,000 copies take seconds. A copy
 * written to is replaced by a new file, never written through its link.
 */
export function copiesOf(source: string, count: number): string {
  const projectsDir = mkdtempSync(join(tmpdir(), 'steward-bench-memory-'));
  const project = `${basename(source)}.qgs`;
  for (let copy = 0; copy < count; copy++) {
    linkTree(source, join(projectsDir, `p${copy}`), (file) => (file === project ? `p${copy}.qgs` : file));
  }
  return projectsDir;
}

/** What a launcher added to the API's memory, for a report. */
export function launcher(memory: ProjectsMemory): string {
  return memory.launcherPeak === 0 ? 'no launcher' : `launcher ${(memory.launcherPeak / 1024).toFixed(0)} MB`;
}

/**
 * Runs a fresh API process on `projectsDir`, which reads every project once; `env` is added to its
 * environment. It is started as the service is, and bounds its heap as the service does.
 */
export async function projectsMemory(
  projectsDir: string,
  qgisUrl: string,
  env: Record<string, string> = {},
): Promise<ProjectsMemory> {
  // The compiled child, as the service runs in production (tsx alone adds ~50 MB of its own).
  const compiledChild = join(import.meta.dirname, '..', 'dist', 'bench', 'memory-child.js');
  const child = spawn(process.execPath, [compiledChild, projectsDir, qgisUrl], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`the memory bench's API process ended with ${String(code)}`);
  const lines = output
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Partial<ProjectsMemory>);
  return Object.assign({ launcherPeak: 0 }, ...lines) as ProjectsMemory;
}

function latencySection(results: readonly SizeResult[]): string {
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
  return [
    '## API latency (ms) against PyQGIS reading the same project',
    table(['layers', 'request', 'median', 'p95', 'reference'], rows),
    '',
    `GET layer at 1000 layers / at 10 layers: ${(large / small).toFixed(2)} (target: within 2)`,
  ].join('\n');
}

function throughputSection(rps: number): string {
  return [
    '## Throughput',
    table(
      ['request', 'requests/s', 'target'],
      [['GET layer, 500-layer project, 16 connections', rps.toFixed(0), '>= 2000']],
    ),
  ].join('\n');
}

function mapSection(maps: readonly MapComparison[]): string {
  return [
    '## GET .../map against the same GetMap sent to QGIS Server directly (400 x 400 PNG)',
    `${MAP_RUNS} rounds per layer, each a direct GetMap, the API's, then a bare Node proxy's (bench/bare-proxy.ts: node:http's client, no routing, checks or logging); "added" is the median of the rounds' differences from the direct GetMap, against the direct median. The bare proxy's is what an extra hop through Node costs on this machine when made the usual way.`,
    '',
    table(
      [
        'layer',
        'API /map median',
        'direct median',
        'API p95',
        'direct p95',
        'added by the API',
        'added by a bare Node proxy',
        'target',
      ],
      maps.map((map) => [
        map.layer,
        ms(map.api.median),
        ms(map.direct.median),
        ms(map.api.p95),
        ms(map.direct.p95),
        `+${ms(map.added.median)} ms (${((map.added.median / map.direct.median) * 100).toFixed(1)}%)`,
        `+${ms(map.floor.median)} ms (${((map.floor.median / map.direct.median) * 100).toFixed(1)}%)`,
        `within ${MAP_COST * 100}%: ${map.added.median <= map.direct.median * MAP_COST ? 'met' : 'not met'}`,
      ]),
    ),
  ].join('\n');
}

async function memorySection(stack: Stack): Promise<string> {
  const copies = copiesOf(join(stack.projectsDir, 'bench_100'), 100);
  const memory = await projectsMemory(copies, stack.qgis.url);
  const rss = memory.peak + memory.launcherPeak;
  rmSync(copies, { recursive: true, force: true });
  return [
    '## Memory',
    table(
      ['measure', 'MB', 'target'],
      [
        [
          'peak RSS after reading 100 projects of 100 layers (API and any launcher)',
          `${(rss / 1024).toFixed(0)} (${launcher(memory)})`,
          '< 300',
        ],
      ],
    ),
  ].join('\n');
}

/** The parts of the suite, in the order they run. */
export const API_PARTS = ['latency', 'throughput', 'map', 'fastcgi', 'passthrough', 'memory'];

export async function runApiBench(runs: PartFilter = EVERY_PART): Promise<string> {
  const data = makeFixtures();
  const stack = await startStack();
  try {
    const sections: string[] = [];
    if (runs('latency')) {
      const results: SizeResult[] = [];
      for (const size of SIZES) results.push(await measureSize(stack, data, size));
      sections.push(latencySection(results));
    } else {
      // The latency part makes the projects that throughput reads and memory copies.
      if (runs('throughput')) await fillProject(stack, data, 'bench_500', 500);
      if (runs('memory')) await fillProject(stack, data, 'bench_100', 100);
    }
    if (runs('throughput')) sections.push(throughputSection(await throughput(stack, 500)));
    if (runs('map')) sections.push(mapSection(await mapAgainstQgis(stack, data)));
    if (runs('fastcgi')) sections.push(fastcgiMapReport(await mapOverFastcgi(data, MAP_RUNS), MAP_COST));
    if (runs('passthrough'))
      sections.push(
        passthroughReport(await mapThroughPassthrough(stack, data, PASSTHROUGH_RUNS), PASSTHROUGH_LIMIT_MS),
      );
    if (runs('memory')) sections.push(await memorySection(stack));
    return sections.join('\n\n');
  } finally {
    closeClient();
    await stack.stop();
  }
}
