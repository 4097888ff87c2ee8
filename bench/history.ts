/**
 * What keeping project versions costs: writes with history on against off at 10 and 1000 layers
 * (two API processes, in turn), the restore of a version of a 1000-layer project, and the disk that
 * 10,000 versions of a 1000-layer project take, one layer changed in each.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ProjectDocument } from '../src/qgis/project.js';
import { VersionRecorder } from '../src/services/version-recorder.js';
import { FilesystemStore } from '../src/storage/filesystem-store.js';
import { HISTORY_FILE } from '../src/storage/sqlite-versions.js';
import { type Fixtures, makeFixtures } from '../test/support/fixtures.js';
import { fillProject, writeSamples } from './api.js';
import { type CallableApi, startApiAlone } from './api-process.js';
import { cpuSeconds } from './cpu.js';
import { closeClient } from './http-client.js';
import { EVERY_PART, type PartFilter } from './parts.js';
import { median, ms, ratios, sample, spread, summarise, table } from './stats.js';

export const HISTORY_PARTS = ['writes', 'restore', 'size'];

const SIZES = [10, 1000] as const;
const WRITE_ROUNDS = 6;
const WRITES_PER_ROUND = 5;
const RESTORES = 12;
const VERSIONS = 10_000;
const MIB = 1024 * 1024;

type Api = CallableApi;

function startApi(projectsDir: string, history: boolean): Promise<Api> {
  return startApiAlone(projectsDir, { STEWARD_HISTORY_VERSIONS: history ? '1000' : '0' });
}

interface Rounds {
  /** Each round's median, ms. */
  on: number[];
  off: number[];
  /** The API process's CPU seconds over every round: what the machine's other load does not change. */
  cpu: { on: number; off: number };
}

/** Each round's median of every write at `size`, with history on and off, the two processes in turn. */
async function writeRounds(on: Api, off: Api, data: Fixtures, size: number): Promise<Rounds> {
  const project = `writes_${size}`;
  const rounds: Rounds = { on: [], off: [], cpu: { on: 0, off: 0 } };
  for (let round = 0; round < WRITE_ROUNDS; round++) {
    const order: Array<['on' | 'off', Api]> =
      round % 2
        ? [
            ['off', off],
            ['on', on],
          ]
        : [
            ['on', on],
            ['off', off],
          ];
    for (const [key, api] of order) {
      const cpu = cpuSeconds([api.pid]);
      const written = await writeSamples(api, api.url, data, project, WRITES_PER_ROUND);
      rounds.cpu[key] += cpuSeconds([api.pid]) - cpu;
      rounds[key].push(median(Object.values(written).flat()));
    }
  }
  return rounds;
}

async function writesSection(on: Api, off: Api, data: Fixtures): Promise<string> {
  const rows: string[][] = [];
  for (const size of SIZES) {
    const { on: withHistory, off: without, cpu } = await writeRounds(on, off, data, size);
    const ratio = ratios(withHistory, without);
    const perWrite = (seconds: number) => ms((seconds * 1000) / (WRITE_ROUNDS * WRITES_PER_ROUND * 3));
    const cpuRatio = cpu.on / cpu.off;
    rows.push([
      `${size} layers`,
      ms(median(withHistory)),
      ms(median(without)),
      `${median(ratio).toFixed(2)}x (rounds ${spread(ratio, 2, 'x')})`,
      `≤ 1.2x: ${median(ratio) <= 1.2 ? 'met' : 'not met'}`,
      `${perWrite(cpu.on)} / ${perWrite(cpu.off)}`,
      `${cpuRatio.toFixed(2)}x: ${cpuRatio <= 1.2 ? 'met' : 'not met'}`,
    ]);
  }
  return [
    '## Writes with history on against off (ms, median of every write of a round)',
    `${WRITE_ROUNDS} rounds of ${WRITES_PER_ROUND} of each write (add a layer, change a layer's style, remove a layer), the two API processes in turn.`,
    "CPU per write: the API process's CPU time over every round (clock ticks of /proc), on / off, per write.",
    '',
    table(['project', 'history on', 'history off', 'ratio', 'target', 'CPU per write', 'CPU ratio ≤ 1.2x'], rows),
  ].join('\n');
}

/** Restores of the 1000-layer project, to two versions a few writes back in turn, over HTTP: a row of the table. */
async function restoreRow(on: Api, versions: string): Promise<string[]> {
  const listed = await on.call('GET', '/api/projects/writes_1000/versions?limit=10');
  const newest = (listed.body as { versions: { id: string }[] }).versions;
  const targets = [newest[3]?.id, newest[6]?.id];
  let turn = 0;
  const cpu = cpuSeconds([on.pid]);
  const times = await sample(RESTORES, async () => {
    const reply = await on.call('POST', `/api/projects/writes_1000/versions/${targets[turn++ % 2]}/restore`);
    if (reply.status !== 200) throw new Error(JSON.stringify(reply.body));
  });
  const perRestore = ((cpuSeconds([on.pid]) - cpu) * 1000) / RESTORES;
  const { median: middle, p95 } = summarise(times);
  const target = `< 50 ms: ${middle < 50 ? 'met' : 'not met'}`;
  return [versions, String(RESTORES), ms(middle), ms(p95), ms(perRestore), target];
}

/**
 * Restores by the process that wrote the versions, which keeps them at hand, then by one started
 * since, which rebuilds them from their chains; answers the section and the process left running.
 */
async function restoreSection(on: Api, projectsDir: string): Promise<{ section: string; on: Api }> {
  const kept = await restoreRow(on, 'kept by the process that wrote them');
  await on.close();
  const started = await startApi(projectsDir, true);
  const rebuilt = await restoreRow(started, 'rebuilt from their chains (a process started since)').catch(
    async (error: unknown) => {
      await started.close();
      throw error;
    },
  );
  const section = [
    '## Restore of a version of the 1000-layer project (ms, over HTTP)',
    "CPU per restore: the API process's CPU time over every restore (clock ticks of /proc), per restore.",
    '',
    table(['versions', 'restores', 'median', 'p95', 'CPU per restore', 'target'], [kept, rebuilt]),
  ].join('\n');
  return { section, on: started };
}

/** 10,000 versions of the 1000-layer project, one layer changed in each, recorded as the API does. */
async function sizeSection(projectFile: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-versions-'));
  try {
    const store = new FilesystemStore(dir);
    const ref = { name: 'versions', schema: 'public' };
    const text = readFileSync(projectFile, 'utf8');
    await store.create(ref, text);
    const recorder = new VersionRecorder(store, { versions: VERSIONS, days: 90 });
    const document = ProjectDocument.parse(text);
    const names = document.layers().map((layer) => layer.name);
    const times: number[] = [];
    for (let index = 0; index < VERSIONS; index++) {
      const name = names[index % names.length] as string;
      document.mapLayerElement(name)?.attributes.set('maxScale', String(index));
      document.invalidate(name);
      const pieces = document.encode();
      const start = performance.now();
      const layers = document.everyLayer();
      await recorder.record(ref, { pieces, identity: String(index), summary: `changed ${name}`, styles: [], layers });
      times.push(performance.now() - start);
    }
    store.versions.close();
    const bytes = statSync(join(dir, HISTORY_FILE)).size;
    const { median: middle, p95 } = summarise(times);
    return [
      `## ${VERSIONS.toLocaleString('en')} versions of the 1000-layer project (${(Buffer.byteLength(text) / MIB).toFixed(1)} MiB), one layer changed in each`,
      '',
      table(
        ['on disk', 'recording, median', 'recording, p95', 'target'],
        [
          [
            `${(bytes / MIB).toFixed(1)} MiB`,
            `${ms(middle)} ms`,
            `${ms(p95)} ms`,
            `< 100 MB: ${bytes < 100e6 ? 'met' : 'not met'}`,
          ],
        ],
      ),
    ].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runHistoryBench(runs: PartFilter = EVERY_PART): Promise<string> {
  const data = makeFixtures();
  const dirs = {
    on: mkdtempSync(join(tmpdir(), 'steward-bench-history-on-')),
    off: mkdtempSync(join(tmpdir(), 'steward-bench-history-off-')),
  };
  let on = await startApi(dirs.on, true);
  const off = await startApi(dirs.off, false);
  try {
    for (const size of SIZES) {
      await fillProject(on, data, `writes_${size}`, size);
      await fillProject(off, data, `writes_${size}`, size);
    }
    const sections: string[] = [];
    if (runs('writes')) sections.push(await writesSection(on, off, data));
    if (runs('restore')) {
      const restored = await restoreSection(on, dirs.on);
      sections.push(restored.section);
      on = restored.on;
    }
    if (runs('size')) sections.push(await sizeSection(join(dirs.off, 'writes_1000', 'writes_1000.qgs')));
    return sections.join('\n\n');
  } finally {
    closeClient();
    await on.close();
    await off.close();
    for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
    rmSync(data.dir, { recursive: true, force: true });
  }
}
