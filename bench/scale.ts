/**
 * How the API scales with the size and the number of projects: writes at 10 and 1000 layers, reads
 * while a client writes, memory and listing with many projects on disk.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import autocannon from 'autocannon';

import { writeFileAtomic } from '../src/storage/atomic-file.js';
import { type Fixtures, makeFixtures } from '../test/support/fixtures.js';
import {
  type Caller,
  copiesOf,
  fillProject,
  launcher,
  layerBody,
  projectsMemory,
  pyqgisRead,
  writeSamples,
} from './api.js';
import { NO_QGIS_SERVER, startApiAlone } from './api-process.js';
import { closeClient } from './http-client.js';
import { EVERY_PART, type PartFilter } from './parts.js';
import { median, ms, summarise, table, type Timing } from './stats.js';

/** Projects of 100 layers on disk, each read once, for the memory figure (hard links of one project). */
const MANY_PROJECTS = 10_000;
const READ_SECONDS = 8;
/** Rounds of writes, each WRITES_PER_ROUND of each write on each size. */
const WRITE_ROUNDS = 8;
const WRITES_PER_ROUND = 5;
/** Runs of reads alone and under writes, in turn. */
const READ_ROUNDS = 5;
/** Durable replaces of each project's file alone, in turn, for the floor of a write. */
const REPLACE_RUNS = 15;

/** The API's own process, and how to call it. */
type Api = Caller & { url: string; pid: number };

const verdict = (met: boolean): string => (met ? 'met' : 'not met');

/** The writes at one size: each request's figures, and the bytes each write left bound for the disk. */
interface SizeWrites {
  timings: Record<string, Timing>;
  diskBytesPerWrite: number;
}

/**
 * Bytes the process dirtied in the system's cache and did not cancel by removing or truncating the
 * file before it was written out (/proc/<pid>/io): what its writes leave for the disk to write.
 */
function bytesBoundForDisk(pid: number): number {
  const io = Object.fromEntries(
    readFileSync(`/proc/${pid}/io`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(': ') as [string, string]),
  );
  return Number(io.write_bytes) - Number(io.cancelled_write_bytes);
}

/**
 * The writes of `writeSamples` on a project of each size, in WRITE_ROUNDS rounds that take the sizes
 * in turn (the first size first in even rounds, last in odd ones), so that the machine's load
 * weighs on every size alike; each write's figures over all rounds.
 */
async function writesAt(api: Api, data: Fixtures, sizes: readonly number[]): Promise<SizeWrites[]> {
  for (const size of sizes) await fillProject(api, data, `writes_${size}`, size);
  // One write of each kind first, so that no figure takes in the removal of the fill's last version.
  for (const size of sizes) await writeSamples(api, api.url, data, `writes_${size}`, 1);
  const samples = sizes.map((size) => {
    const times: Record<string, number[]> = {};
    return { size, times, writes: 0, diskBytes: 0 };
  });
  for (let round = 0; round < WRITE_ROUNDS; round++) {
    for (const sample of round % 2 ? [...samples].reverse() : samples) {
      const before = bytesBoundForDisk(api.pid);
      const written = await writeSamples(api, api.url, data, `writes_${sample.size}`, WRITES_PER_ROUND);
      sample.diskBytes += bytesBoundForDisk(api.pid) - before;
      for (const [name, values] of Object.entries(written)) {
        sample.times[name] = [...(sample.times[name] ?? []), ...values];
        sample.writes += values.length;
      }
    }
  }
  return samples.map(({ times, writes, diskBytes }) => ({
    timings: Object.fromEntries(Object.entries(times).map(([name, values]) => [name, summarise(values)])),
    diskBytesPerWrite: diskBytes / writes,
  }));
}

/** A project's file, and what replacing it durably costs alone (as the store writes it). */
interface FileReplace {
  bytes: number;
  replace: Timing;
}

/**
 * Durable replaces of copies of the projects' files (new file, flush, put in place as the store does,
 * folder flush), the sizes in turn: the part of a write no serialisation can save, which the disk decides.
 */
async function replaceFloor(projectsDir: string, sizes: readonly number[]): Promise<FileReplace[]> {
  const scratch = mkdtempSync(join(projectsDir, '.replace-'));
  try {
    const files = sizes.map((size) => readFileSync(join(projectsDir, `writes_${size}`, `writes_${size}.qgs`)));
    const samples = files.map((): number[] => []);
    for (let run = 0; run < REPLACE_RUNS; run++) {
      for (const [index, bytes] of files.entries()) {
        const start = performance.now();
        await writeFileAtomic(join(scratch, `${index}.qgs`), bytes, { releaseLater: true });
        samples[index]?.push(performance.now() - start);
      }
    }
    return files.map((bytes, index) => ({ bytes: bytes.byteLength, replace: summarise(samples[index] ?? []) }));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

interface ReadRun {
  requests: number;
  p99: number;
  max: number;
  writes: number;
  /** Writes a second the writer made over the run. */
  writeRate: number;
  /** The machine's load average as the run started. */
  load: number;
}

/**
 * Alone, under writes, and under the same write traffic sent to another API process, in turn,
 * READ_ROUNDS times each.
 */
interface ReadRuns {
  alone: ReadRun[];
  underWrites: ReadRun[];
  elsewhere: ReadRun[];
}

/** What the writer did: its writes, over how long. */
interface Written {
  writes: number;
  seconds: number;
}

/**
 * The writing client (bench/writer-child.ts) in a process of its own, once its first write is
 * done; at `rate` writes a second, or each as soon as the one before is answered without one.
 */
async function startWriter(
  api: Api,
  project: string,
  layer: unknown,
  rate?: number,
): Promise<{ stop(): Promise<Written> }> {
  const script = join(import.meta.dirname, 'writer-child.ts');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', script, api.url, project, JSON.stringify(layer), String(rate ?? 0)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await Promise.race([
    once(child.stdout, 'data'),
    exited.then((code) => Promise.reject(new Error(`the writer process ended with ${String(code)}`))),
  ]);
  return {
    stop: async () => {
      child.stdin.end();
      const code = await exited;
      if (code !== 0) throw new Error(`the writer process ended with ${String(code)}`);
      return JSON.parse(output.trim().split('\n').at(-1) ?? '') as Written;
    },
  };
}

/** Where a run's writes go, if anywhere: an API and its project, and a pace (none: a closed loop). */
interface WriteLoad {
  api: Api;
  project: string;
  rate?: number;
}

/** 16 connections reading one layer of `project` on `api`, while `writing` (if given) goes on. */
async function readRun(api: Api, data: Fixtures, project: string, writing?: WriteLoad): Promise<ReadRun> {
  const body = layerBody(data, 1, 'churn');
  const writer = writing ? await startWriter(writing.api, writing.project, body, writing.rate) : undefined;
  const load = loadavg()[0] ?? Number.NaN;
  const result = await autocannon({
    url: `${api.url}/api/projects/${project}/layers/layer50`,
    connections: 16,
    duration: READ_SECONDS,
  });
  const written = await writer?.stop();
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`read run had ${result.non2xx} non-2xx and ${result.errors} errors`);
  return {
    requests: result.requests.average,
    p99: result.latency.p99,
    max: result.latency.max,
    writes: written?.writes ?? 0,
    writeRate: written ? written.writes / written.seconds : 0,
    load,
  };
}

/**
 * Each round reads alone, then under a closed-loop writer on the same project, then while a writer
 * sends the same number of writes a second to another API process: the cost of that write traffic
 * to the readers on this machine with none of it on their API's event loop.
 */
async function readRuns(api: Api, other: Api, data: Fixtures, project: string): Promise<ReadRuns> {
  const runs: ReadRuns = { alone: [], underWrites: [], elsewhere: [] };
  for (let round = 0; round < READ_ROUNDS; round++) {
    runs.alone.push(await readRun(api, data, project));
    const underWrites = await readRun(api, data, project, { api, project });
    runs.underWrites.push(underWrites);
    runs.elsewhere.push(await readRun(api, data, project, { api: other, project, rate: underWrites.writeRate }));
  }
  return runs;
}

function writesSection(
  small: SizeWrites,
  large: SizeWrites,
  [smallFile, largeFile]: FileReplace[],
  load: number,
): string {
  const rows = Object.entries(large.timings).map(([name, timing]) => {
    const base = small.timings[name]?.median ?? Number.NaN;
    const ratio = timing.median / base;
    return [
      name,
      ms(base),
      ms(timing.median),
      ms(timing.p95),
      ratio.toFixed(2),
      `median <= 10 ms and <= 1.5x: ${verdict(timing.median <= 10 && ratio <= 1.5)}`,
    ];
  });
  const file = (label: string, replace: FileReplace | undefined, writes: SizeWrites): string[] => [
    `durable replace of the project's file alone (${label})`,
    ms(replace?.replace.median ?? Number.NaN),
    `${((replace?.bytes ?? 0) / 1e6).toFixed(2)} MB`,
    `${(writes.diskBytesPerWrite / 1e6).toFixed(3)} MB`,
  ];
  return [
    '## Writes from an HTTP client, 10 against 1000 layers (ms, datasource probe included)',
    `${WRITE_ROUNDS} rounds, each ${WRITES_PER_ROUND} of each write on the 10-layer project and on the 1000-layer one, the sizes in turn (alternating which goes first). ` +
      'The API runs as a process of its own, started as `npm run serve` starts it (Node on the compiled dist/, which runs ' +
      "itself again under the heap bound); the clients run in the bench's process, all but the writer of the reads under writes below, " +
      'which runs in a process of its own.',
    `Load average of the machine before the writes: ${load.toFixed(2)}.`,
    '',
    table(['request', '10 layers, median', '1000 layers, median', '1000 layers, p95', 'ratio', 'target'], rows),
    '',
    "What the disk alone takes for each write: a new file, flushed, put in the old one's place as the store does " +
      '(names exchanged), the folder flushed, ' +
      `${REPLACE_RUNS} times each, the two sizes in turn. Beside it, what the API's writes above left for the disk ` +
      "to write, per write: the bytes its process put in the system's cache less those it removed before they " +
      'were written out (/proc/<pid>/io: write_bytes less cancelled_write_bytes).',
    '',
    table(
      ['measure', 'median ms', 'file', "API's write: bytes left for the disk"],
      [file('10 layers', smallFile, small), file('1000 layers', largeFile, large)],
    ),
  ].join('\n');
}

/** Each figure's median over the runs. */
function medianRun(runs: ReadRun[]): ReadRun {
  const of = (figure: keyof ReadRun): number => median(runs.map((run) => run[figure]));
  return {
    requests: of('requests'),
    p99: of('p99'),
    max: of('max'),
    writes: of('writes'),
    writeRate: of('writeRate'),
    load: of('load'),
  };
}

const RUN_LABELS: Record<keyof ReadRuns, string> = {
  alone: 'reads alone',
  underWrites: 'under writes',
  elsewhere: 'writes to another API',
};

function readsSection(runs: ReadRuns): string {
  const kinds = Object.keys(RUN_LABELS) as (keyof ReadRuns)[];
  // Each round's share of its own reads alone: the machine's speed drifts between rounds more than within one.
  const shareOf = (kind: keyof ReadRuns): number =>
    median(runs[kind].map((run, index) => run.requests / (runs.alone[index]?.requests ?? Number.NaN)));
  const share = (kind: keyof ReadRuns): string => `${(shareOf(kind) * 100).toFixed(0)}%`;
  const met = shareOf('underWrites') >= 0.8;
  const underWritesP99 = medianRun(runs.underWrites).p99;
  const row = (label: string, run: ReadRun): string[] => [
    label,
    run.requests.toFixed(0),
    String(run.p99),
    String(run.max),
    String(run.writes),
    run.writeRate.toFixed(0),
    run.load.toFixed(2),
  ];
  const rows = runs.alone.flatMap((_, index) =>
    kinds.flatMap((kind) => {
      const run = runs[kind][index];
      return run ? [row(`round ${index + 1}, ${RUN_LABELS[kind]}`, run)] : [];
    }),
  );
  return [
    `## Reads under writes (GET layer of a 100-layer project, 16 connections, ${READ_SECONDS} s)`,
    `Each of ${READ_ROUNDS} rounds reads alone, then while one client adds and removes a layer of the same project ` +
      'as fast as the API answers it (a closed loop), then while the same client sends as many writes a second as ' +
      "it just made to another API process on this machine, so that none of their work is on the readers' API. The " +
      "writing client runs in a process of its own and, like the readers', uses node:http. Medians of each figure " +
      'over the rounds, then each run with the load average as it started. A share of the read-only throughput is ' +
      "the median over the rounds of each round's requests/s against those of its own reads alone.",
    '',
    table(
      ['run', 'requests/s', 'p99 ms', 'max ms', 'writes', 'writes/s', 'load'],
      [...kinds.map((kind) => row(`${RUN_LABELS[kind]}, median`, medianRun(runs[kind]))), ...rows],
    ),
    '',
    `Under writes (medians): p99 ${underWritesP99} ms (target < 5 ms: ${verdict(underWritesP99 < 5)}), ` +
      `${share('underWrites')} of the read-only throughput (target >= 80%: ${verdict(met)}). ` +
      `The same write traffic sent to another API process left the readers ${share('elsewhere')}: what those writes ` +
      "cost the readers on this machine's 2 cores (the writing client, that API, the kernel's work for them) " +
      "without any of it on the readers' event loop.",
  ].join('\n');
}

async function memorySection(projectsDir: string): Promise<string> {
  const copies = copiesOf(join(projectsDir, 'reads'), MANY_PROJECTS);
  try {
    const measured = await projectsMemory(copies, NO_QGIS_SERVER);
    const pyqgis = pyqgisRead(join(projectsDir, 'reads', 'reads.qgs'), 5);
    const rss = (measured.peak + measured.launcherPeak) / 1024;
    return [
      `## ${MANY_PROJECTS.toLocaleString('en')} projects of 100 layers on disk, each read once by a fresh API process (default settings)`,
      'The API started as `npm run serve` starts it: the default cache bound, and the heap bound of ' +
        '`STEWARD_HEAP_MB` (by default the cache bound plus 256 MiB), for which the entry point runs itself again in a ' +
        "bounded child; the launcher's RSS is counted in.",
      '',
      table(
        ['measure', 'value', 'target'],
        [
          [
            'peak RSS, API and any launcher',
            `${rss.toFixed(0)} MB (${launcher(measured)})`,
            `< 512 MB: ${verdict(rss < 512)}`,
          ],
          ['GET /api/projects, median', `${ms(measured.list)} ms`, `< 50 ms: ${verdict(measured.list < 50)}`],
          [
            "a project's first read (cache miss: read and parse), median",
            `${ms(measured.firstRead)} ms`,
            `reported beside PyQGIS's read of the same file: ${ms(pyqgis.unresolved.median)} ms (layers unresolved)`,
          ],
        ],
      ),
    ].join('\n');
  } finally {
    rmSync(copies, { recursive: true, force: true });
  }
}

/** The parts of the suite, in the order they run. */
export const SCALE_PARTS = ['writes', 'reads', 'memory'];

/** The reads' runs, with a second API process of its own projects for the writes sent elsewhere. */
async function readsElsewhereToo(api: Api, data: Fixtures, project: string): Promise<ReadRuns> {
  const otherDir = mkdtempSync(join(tmpdir(), 'steward-bench-scale-other-'));
  const other = await startApiAlone(otherDir);
  try {
    await fillProject(other, data, project, 100);
    return await readRuns(api, other, data, project);
  } finally {
    await other.close();
    rmSync(otherDir, { recursive: true, force: true });
  }
}

export async function runScaleBench(runs: PartFilter = EVERY_PART): Promise<string> {
  const data = makeFixtures();
  const projectsDir = mkdtempSync(join(tmpdir(), 'steward-bench-scale-'));
  const api = await startApiAlone(projectsDir);
  try {
    const sections: string[] = [];
    if (runs('writes')) {
      const load = loadavg()[0] ?? Number.NaN;
      const [small, large] = await writesAt(api, data, [10, 1000]);
      const files = await replaceFloor(projectsDir, [10, 1000]);
      if (small && large) sections.push(writesSection(small, large, files, load));
    }
    // The many projects of the memory part are copies of the reads' project.
    if (runs('reads') || runs('memory')) await fillProject(api, data, 'reads', 100);
    if (runs('reads')) sections.push(readsSection(await readsElsewhereToo(api, data, 'reads')));
    if (runs('memory')) sections.push(await memorySection(projectsDir));
    return sections.join('\n\n');
  } finally {
    closeClient();
    await api.close();
    rmSync(projectsDir, { recursive: true, force: true });
  }
}
