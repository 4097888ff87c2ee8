/**
 * What organizing a project costs as it grows (docs/organizing-projects.md): replacing the layer
 * tree, changing a layer's properties and the service settings, and reading the tree, over HTTP to
 * an API process, on a 1000-layer project against a 10-layer one, the two measured in turn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { makeFixtures } from '../test/support/fixtures.js';
import { fillProject, treeSamples } from './api.js';
import { type CallableApi, startApiAlone } from './api-process.js';
import { cpuSeconds } from './cpu.js';
import { closeClient, send } from './http-client.js';
import { median, ms, ratios, sample, spread, table } from './stats.js';

const SIZES = [10, 1000] as const;
const ROUNDS = 4;
const EDITS_PER_ROUND = 8;
const READS_PER_ROUND = 50;
/** The writes' targets (issue 40): a 1000-layer edit's median, and its ratio to the 10-layer one. */
const EDIT_MS = 10;
const EDIT_RATIO = 1.5;
const TREE_READ_MS = 2;

type Samples = Record<string, number[]>;
/** The API process's CPU seconds by operation, and how many requests they served. */
type Cpu = Record<string, { seconds: number; requests: number }>;

const project = (size: number): string => `organize_${size}`;

/** Replacing the tree `runs` times with one layer moved: in turn the last layer on top, and back. */
async function oneLayerMoved(url: string, runs: number): Promise<number[]> {
  const flat = JSON.parse((await send(url)).toString('utf8')) as { children: unknown[] };
  const moved = { children: [flat.children.at(-1), ...flat.children.slice(0, -1)] };
  let put = 0;
  return sample(runs, () => send(url, 'PUT', undefined, put++ % 2 ? flat : moved));
}

/** One round of each edit and of the tree's reads on the project of `size` layers: every time, and the API's CPU time added to `cpu`. */
async function round(api: CallableApi, size: number, turn: number, cpu: Cpu): Promise<Samples> {
  const base = `${api.url}/api/projects/${project(size)}`;
  const layer = `${base}/layers/layer${Math.floor(size / 2)}`;
  let edit = turn * EDITS_PER_ROUND;
  const samples: Samples = {};
  const measure = async (operation: string, requests: number, run: () => Promise<number[]>): Promise<void> => {
    const before = cpuSeconds([api.pid]);
    samples[operation] = await run();
    const spent = (cpu[operation] ??= { seconds: 0, requests: 0 });
    spent.seconds += cpuSeconds([api.pid]) - before;
    spent.requests += requests;
  };
  await measure('PUT tree, one layer moved', EDITS_PER_ROUND, () => oneLayerMoved(`${base}/tree`, EDITS_PER_ROUND));
  await measure('PUT tree, half the layers into a group and back', EDITS_PER_ROUND, () =>
    treeSamples(api.url, project(size), EDITS_PER_ROUND),
  );
  await measure('PATCH layer properties', EDITS_PER_ROUND, () =>
    sample(EDITS_PER_ROUND, () =>
      send(layer, 'PATCH', undefined, { title: `title ${edit++}`, opacity: (edit % 10) / 10 }),
    ),
  );
  await measure('PATCH services', EDITS_PER_ROUND, () =>
    sample(EDITS_PER_ROUND, () =>
      send(`${base}/services`, 'PATCH', undefined, { wms: { max_width: 2000 + (edit++ % 2) * 1000 } }),
    ),
  );
  await measure('GET tree', READS_PER_ROUND, () => sample(READS_PER_ROUND, () => send(`${base}/tree`)));
  return samples;
}

interface Measured {
  medians: Map<number, Samples>;
  cpu: Map<number, Cpu>;
}

/** Each operation's median in each round, and the API's CPU time, by size, the sizes measured in turn. */
async function rounds(api: CallableApi): Promise<Measured> {
  const medians = new Map<number, Samples>(SIZES.map((size) => [size, {}]));
  const cpu = new Map<number, Cpu>(SIZES.map((size) => [size, {}]));
  for (let turn = 0; turn < ROUNDS; turn++) {
    for (const size of turn % 2 ? [...SIZES].reverse() : SIZES) {
      const byOperation = medians.get(size) as Samples;
      for (const [operation, times] of Object.entries(await round(api, size, turn, cpu.get(size) as Cpu)))
        (byOperation[operation] ??= []).push(median(times));
    }
  }
  return { medians, cpu };
}

/** The API's mean CPU time per request of `operation` (ms); the clock ticks at 10 ms, so it is a mean over the rounds. */
function cpuPerRequest(cpu: Cpu | undefined, operation: string): string {
  const spent = cpu?.[operation];
  return spent && spent.requests > 0 ? ms((spent.seconds * 1000) / spent.requests) : '-';
}

function verdict(operation: string, small: number, large: number): string {
  if (operation.startsWith('GET')) return `< ${TREE_READ_MS} ms: ${large < TREE_READ_MS ? 'met' : 'not met'}`;
  const met = large <= EDIT_MS && large / small <= EDIT_RATIO;
  return `≤ ${EDIT_MS} ms and ≤ ${EDIT_RATIO}x: ${met ? 'met' : 'not met'}`;
}

function report({ medians, cpu }: Measured): string {
  const [small, large] = SIZES.map((size) => medians.get(size) as Samples);
  const [smallCpu, largeCpu] = SIZES.map((size) => cpu.get(size));
  const rows = Object.keys(small ?? {}).map((operation) => {
    const [of10, of1000] = [small?.[operation] ?? [], large?.[operation] ?? []];
    const ratio = ratios(of1000, of10);
    return [
      operation,
      ms(median(of10)),
      `${ms(median(of1000))} (rounds ${spread(of1000, 2)})`,
      `${median(ratio).toFixed(2)}x`,
      `${cpuPerRequest(smallCpu, operation)} / ${cpuPerRequest(largeCpu, operation)}`,
      verdict(operation, median(of10), median(of1000)),
    ];
  });
  return [
    '## Organizing a project: 1000 layers against 10 (ms, median of the rounds)',
    `${ROUNDS} rounds of ${EDITS_PER_ROUND} of each edit and ${READS_PER_ROUND} reads of the tree per project, the two projects in turn, over HTTP to an API process (history on); CPU: the API process's mean per request, 10 / 1000 layers. Machine load (1, 5, 15 min) at the end: ${loadavg()
      .map((load) => load.toFixed(2))
      .join(', ')}.`,
    '',
    table(['operation', '10 layers', '1000 layers', 'ratio', 'CPU ms', 'target'], rows),
  ].join('\n');
}

export async function runOrganizeBench(): Promise<string> {
  const data = makeFixtures();
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-organize-'));
  const api = await startApiAlone(dir);
  try {
    for (const size of SIZES) await fillProject(api, data, project(size), size);
    return report(await rounds(api));
  } finally {
    closeClient();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(data.dir, { recursive: true, force: true });
  }
}
