import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { crc32 } from 'node:zlib';

import { ACCESS_DIR } from '../src/access/filesystem-access.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { fileVersion } from '../src/storage/file-version.js';
import { journalPaths } from '../src/storage/project-journal.js';
import { HISTORY_FILE } from '../src/storage/sqlite-versions.js';
import { type ApiProcess, startApiProcess } from './support/api-process.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { projectProblems, publishedLayers } from './support/qgis.js';
import { seededRandom } from './support/rasters.js';
import { fillStyle, polygonLayer } from './support/write-bodies.js';

const ROUNDS = 12;
/** How long a round may take before the test counts as hung. */
const ROUND_TIMEOUT_MS = 40_000;
const CLIENTS = 5;
const SHARED_PROJECTS = ['shared-a', 'shared-b'];
/** Per client and project: keeps the projects, and so each round's checks, small. */
const MAX_OWN_LAYERS = 4;
/** A lock file left by the killed process must not hold up the next one (proper-lockfile's took 10 s). */
const FIRST_WRITE_LIMIT_MS = 5_000;

interface LayerState {
  styles: Set<string>;
  current: string;
}
interface ProjectState {
  layers: Map<string, LayerState>;
  styles: Set<string>;
}
/** Projects by name: what the tests expect, or what the API shows. */
type State = Map<string, ProjectState>;

/** One write request of the storm, and what it does to the projects. */
interface Write {
  what: string;
  method: 'POST' | 'DELETE';
  path: string;
  body?: unknown;
  status: number;
  /** Its effect, once acknowledged. */
  apply(state: State): void;
  /** Whether a state shows its effect: for a write the kill cut off, which may or may not have landed. */
  landed(state: State): boolean;
}

function layerOf(state: State, project: string, layer: string): LayerState | undefined {
  return state.get(project)?.layers.get(layer);
}

function mustGet<K, V>(map: Map<K, V>, key: K): V {
  const value = map.get(key);
  assert.ok(value !== undefined, `${String(key)} is missing`);
  return value;
}

const writes = {
  createProject: (name: string): Write => ({
    what: `create project ${name}`,
    method: 'POST',
    path: '/api/projects/',
    body: { name, author: 'storm' },
    status: 201,
    apply: (state) => state.set(name, { layers: new Map(), styles: new Set() }),
    landed: (state) => state.has(name),
  }),
  deleteProject: (name: string): Write => ({
    what: `delete project ${name}`,
    method: 'DELETE',
    path: `/api/projects/${name}`,
    status: 200,
    apply: (state) => state.delete(name),
    landed: (state) => !state.has(name),
  }),
  addLayer: (project: string, layer: string, geopackage: string): Write => ({
    what: `add layer ${project}/${layer}`,
    method: 'POST',
    path: `/api/projects/${project}/layers`,
    body: polygonLayer(layer, geopackage),
    status: 201,
    apply: (state) => mustGet(state, project).layers.set(layer, { styles: new Set(['default']), current: 'default' }),
    landed: (state) => layerOf(state, project, layer) !== undefined,
  }),
  deleteLayer: (project: string, layer: string): Write => ({
    what: `delete layer ${project}/${layer}`,
    method: 'DELETE',
    path: `/api/projects/${project}/layers/${layer}`,
    status: 200,
    apply: (state) => mustGet(state, project).layers.delete(layer),
    landed: (state) => layerOf(state, project, layer) === undefined,
  }),
  addStyle: (project: string, style: string, color: string): Write => ({
    what: `add style ${project}/${style}`,
    method: 'POST',
    path: `/api/projects/${project}/styles`,
    body: fillStyle(style, color),
    status: 201,
    apply: (state) => mustGet(state, project).styles.add(style),
    landed: (state) => state.get(project)?.styles.has(style) === true,
  }),
  /** Adds a style to a layer, or makes one it has its current style. */
  applyStyle: (project: string, layer: string, style: string, current: boolean): Write => ({
    what: `apply style ${style} to ${project}/${layer}${current ? ' as current' : ''}`,
    method: 'POST',
    path: `/api/projects/${project}/layers/${layer}/style`,
    body: { name: style, current },
    status: 200,
    apply: (state) => {
      const target = mustGet(mustGet(state, project).layers, layer);
      target.styles.add(style);
      if (current) target.current = style;
    },
    landed: (state) => {
      const target = layerOf(state, project, layer);
      return target !== undefined && target.styles.has(style) && (!current || target.current === style);
    },
  }),
};

/**
 * One client of the storm. It owns the projects, layers and styles it names (`c<id>-...`) and
 * decides its next write from the acknowledged state, so its writes are valid whatever the others do.
 */
class Client {
  private made = 0;

  constructor(
    private readonly id: number,
    private readonly random: () => number,
    private readonly geopackage: string,
  ) {}

  private fresh(kind: string): string {
    return `c${this.id}-${kind}${this.made++}`;
  }

  private owns(name: string): boolean {
    return name.startsWith(`c${this.id}-`);
  }

  private pick<T>(items: T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }

  private color(): string {
    return `#${Math.floor(this.random() * 0x1000000)
      .toString(16)
      .padStart(6, '0')}`;
  }

  next(state: State): Write {
    const ownProjects = [...state.keys()].filter((name) => this.owns(name));
    if (ownProjects.length === 0 || this.random() < 0.06) {
      return ownProjects.length >= 2
        ? writes.deleteProject(this.pick(ownProjects))
        : writes.createProject(this.fresh('p'));
    }
    const project = this.random() < 0.7 ? this.pick(SHARED_PROJECTS) : this.pick(ownProjects);
    const { layers, styles } = mustGet(state, project);
    const ownLayers = [...layers.keys()].filter((name) => this.owns(name));
    const ownStyles = [...styles].filter((name) => this.owns(name));
    const roll = this.random();
    if (ownLayers.length >= MAX_OWN_LAYERS || (roll < 0.1 && ownLayers.length > 0)) {
      return writes.deleteLayer(project, this.pick(ownLayers));
    }
    if (roll < 0.35 || ownLayers.length === 0) return writes.addLayer(project, this.fresh('l'), this.geopackage);
    if (roll < 0.55 || ownStyles.length === 0) return writes.addStyle(project, this.fresh('s'), this.color());
    const layer = this.pick(ownLayers);
    const { styles: layerStyles, current } = mustGet(layers, layer);
    const notYetApplied = ownStyles.filter((name) => !layerStyles.has(name));
    const others = [...layerStyles].filter((name) => name !== current && name !== 'default');
    if (others.length > 0 && (roll > 0.85 || notYetApplied.length === 0))
      return writes.applyStyle(project, layer, this.pick(others), true);
    if (notYetApplied.length > 0)
      return writes.applyStyle(project, layer, this.pick(notYetApplied), this.random() < 0.5);
    return writes.addStyle(project, this.fresh('s'), this.color());
  }
}

interface StormOutcome {
  acknowledged: number;
  /** Writes sent but not answered when the API died. */
  cutOff: Write[];
  failures: string[];
}

/** Runs every client against the API until it is killed, `killAfterMs` after the start. */
async function stormUntilKilled(
  api: ApiProcess,
  clients: Client[],
  expected: State,
  killAfterMs: number,
): Promise<StormOutcome> {
  const outcome: StormOutcome = { acknowledged: 0, cutOff: [], failures: [] };
  const run = async (client: Client): Promise<void> => {
    for (;;) {
      const write = client.next(expected);
      let status: number;
      let body: unknown;
      try {
        ({ status, body } = await api.call(write.method, write.path, write.body));
      } catch {
        outcome.cutOff.push(write);
        return;
      }
      if (status === write.status) {
        write.apply(expected);
        outcome.acknowledged += 1;
      } else {
        outcome.failures.push(`${write.what}: ${status} ${JSON.stringify(body)}`);
      }
    }
  };
  const running = Promise.all(clients.map(run));
  await sleep(killAfterMs);
  await api.kill();
  await running;
  return outcome;
}

async function getJson<T>(api: ApiProcess, path: string): Promise<T> {
  const { status, body } = await api.call('GET', path);
  assert.equal(status, 200, `GET ${path}: ${status} ${JSON.stringify(body)}`);
  return body as T;
}

/** Everything the API shows of the projects; each project, layer and style must read back. */
async function observe(api: ApiProcess): Promise<State> {
  const state: State = new Map();
  for (const project of await getJson<string[]>(api, '/api/projects')) {
    await getJson(api, `/api/projects/${project}`);
    const layers = new Map<string, LayerState>();
    for (const layer of await getJson<string[]>(api, `/api/projects/${project}/layers`)) {
      const info = await getJson<{ styles: string[]; current_style: string; valid: boolean }>(
        api,
        `/api/projects/${project}/layers/${layer}`,
      );
      assert.equal(info.valid, true, `layer ${project}/${layer} is valid`);
      layers.set(layer, { styles: new Set(info.styles), current: info.current_style });
    }
    state.set(project, { layers, styles: new Set(await getJson<string[]>(api, `/api/projects/${project}/styles`)) });
  }
  return state;
}

/** A state as plain sorted data, for comparing. */
function plain(state: State): unknown {
  return [...state.entries()].sort().map(([name, project]) => ({
    name,
    styles: [...project.styles].sort(),
    layers: [...project.layers.entries()]
      .sort()
      .map(([layer, { styles, current }]) => ({ layer, current, styles: [...styles].sort() })),
  }));
}

/**
 * What in the projects folder is not a project's file: anything hidden (temporary files, staging
 * folders) other than the lock files, and SQLite journals.
 */
function leftovers(dir: string, top = true): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (top && entry.name === '.locks' && entry.isDirectory()) {
      return readdirSync(path, { withFileTypes: true })
        .filter((lock) => !(lock.isFile() && lock.name.endsWith('.lock')))
        .map((lock) => join(path, lock.name));
    }
    // The versions database is kept, in SQLite's write-ahead mode, beside the projects.
    if (top && [HISTORY_FILE, `${HISTORY_FILE}-wal`, `${HISTORY_FILE}-shm`].includes(entry.name)) return [];
    // So are tokens, roles and the audit log, whose folder is searched like a project's.
    if (top && entry.name === ACCESS_DIR && entry.isDirectory()) return leftovers(path, false);
    if (entry.name.startsWith('.') || /-(journal|wal|shm)$/.test(entry.name)) return [path];
    return entry.isDirectory() ? leftovers(path, false) : [];
  });
}

/** Puts a project file written through its journal back as it was at the journal's checkpoint. */
function putBackToCheckpoint(projectFile: string): void {
  const { checkpoint } = journalPaths(projectFile);
  const { atime, mtime } = statSync(checkpoint);
  rmSync(projectFile);
  copyFileSync(checkpoint, projectFile);
  utimesSync(projectFile, atime, mtime);
}

/**
 * What a power cut may do besides the kill: every project file written through its journal back as
 * it was at the journal's checkpoint, the later replaces lost with the system's cache. Returns how
 * many project files were put back.
 */
function loseUnflushedReplaces(projectsDir: string): number {
  let lost = 0;
  for (const name of readdirSync(projectsDir).filter((entry) => !entry.startsWith('.'))) {
    const file = join(projectsDir, name, `${name}.qgs`);
    if (!existsSync(journalPaths(file).checkpoint) || !existsSync(file)) continue;
    putBackToCheckpoint(file);
    lost += 1;
  }
  return lost;
}

/**
 * Replaces the journal of a project file written through it by one whose one record, of a later
 * time and another size than the file's, copies bytes the checkpoint does not have: settling it
 * must rebuild the file and cannot. The record's CRC is right, as for a journal a faulty build wrote.
 */
function damageJournal(projectFile: string): void {
  const { checkpoint, journal } = journalPaths(projectFile);
  assert.ok(existsSync(checkpoint), 'the project was written through a journal');
  const version = Buffer.from(fileVersion(checkpoint) ?? '');
  const header = Buffer.alloc(12);
  header.write('SWJRNL01');
  header.writeUInt32LE(version.byteLength, 8);
  const size = statSync(projectFile).size + 2000;
  const body = Buffer.alloc(20 + 17);
  body.writeDoubleLE(Date.now() / 1000 + 3600, 0);
  body.writeDoubleLE(size, 8);
  body.writeUInt32LE(1, 16);
  body.writeUInt8(0, 20);
  body.writeDoubleLE(0, 21);
  body.writeDoubleLE(size, 29);
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32LE(body.byteLength, 0);
  prefix.writeUInt32LE(crc32(body), 4);
  writeFileSync(journal, Buffer.concat([header, version, prefix, body]));
}

/**
 * Flips a byte of the first of a journal's records, as a faulty disk may, and puts the project
 * file back to the journal's checkpoint, as a power cut may: settling only the records before the
 * damage would silently serve the project as it was at the checkpoint.
 */
function damageFirstRecord(projectFile: string): void {
  const { journal } = journalPaths(projectFile);
  const bytes = readFileSync(journal);
  // After the magic, the checkpoint version's length and the version; then the record's length and CRC.
  const firstRecord = 12 + bytes.readUInt32LE(8);
  const inItsModificationTime = firstRecord + 8 + 3;
  bytes.writeUInt8(bytes.readUInt8(inItsModificationTime) ^ 0xff, inItsModificationTime);
  writeFileSync(journal, bytes);
  putBackToCheckpoint(projectFile);
}

/**
 * Journals that settling must refuse. The project gets layer `before` (its first write in the
 * process, written whole: the journal's checkpoint) and then `laterLayers`, each a record.
 */
const JOURNAL_DAMAGES = [
  {
    what: 'a record that does not apply to the checkpoint',
    laterLayers: [],
    damage: damageJournal,
    reason: /project \\"damaged\\": its journal cannot be settled \(a delta copies bytes its base does not have\)/,
  },
  {
    what: 'its first record fails its check and others follow',
    laterLayers: ['middle', 'last'],
    damage: damageFirstRecord,
    reason:
      /project \\"damaged\\": its journal cannot be settled \(\S+damaged\.qgs\.journal: record 1 \(at byte \d+\) fails its check and is not the last\)/,
  },
];

describe('an API killed with SIGKILL in the middle of a storm of writes', () => {
  let qgis: QgisServerProcess;
  let data: Fixtures;
  let projectsDir: string;
  let api: ApiProcess | undefined;
  const start = async (): Promise<ApiProcess> =>
    (api = await startApiProcess({ STEWARD_QGISSERVER_URL: qgis.url, STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir }));

  before(async () => {
    data = makeFixtures();
    projectsDir = mkdtempSync(join(tmpdir(), 'steward-crash-'));
    qgis = await QgisServerProcess.start();
  });
  after(async () => {
    await api?.kill();
    await qgis?.stop();
    rmSync(projectsDir, { recursive: true, force: true });
    rmSync(data.dir, { recursive: true, force: true });
  });

  // Each round restarts the API and has QGIS Server load every project: about 10 s at a load
  // average of 4 on 2 cores, so the default 120 s cut it off after 5 to 10 of the 12 rounds.
  it(
    'restarts on a folder where every project loads, every acknowledged write is kept (project files put back as a power cut may leave them) and nothing is left behind',
    { timeout: ROUNDS * ROUND_TIMEOUT_MS },
    async (t) => {
      const seed = Date.now();
      const random = seededRandom(seed);
      t.diagnostic(`seed ${seed}`);
      const clients = Array.from({ length: CLIENTS }, (_, id) => new Client(id, random, data.geopackage));
      const expected: State = new Map();
      let current = await start();
      for (const name of SHARED_PROJECTS) {
        const write = writes.createProject(name);
        assert.equal((await current.call(write.method, write.path, write.body)).status, 201);
        write.apply(expected);
      }

      let roundsWithLeftovers = 0;
      let filesPutBack = 0;
      for (let round = 1; round <= ROUNDS; round++) {
        const context = `round ${round} (seed ${seed})`;
        const outcome = await stormUntilKilled(current, clients, expected, 300 + random() * 1200);
        assert.deepEqual(outcome.failures, [], `${context}: every write before the kill succeeds`);
        if (leftovers(projectsDir).length > 0) roundsWithLeftovers += 1;
        filesPutBack += loseUnflushedReplaces(projectsDir);

        current = await start();
        assert.deepEqual(leftovers(projectsDir), [], `${context}: nothing is left behind after the restart`);
        const observed = await observe(current);
        // A write that the kill cut off may or may not have landed: it counts when its effect shows.
        for (const write of outcome.cutOff) if (write.landed(observed)) write.apply(expected);
        assert.deepEqual(
          plain(observed),
          plain(expected),
          `${context}: acknowledged writes are all there, and nothing else`,
        );

        const problemsBefore = projectProblems(qgis).length;
        for (const [project, { layers }] of observed) {
          const published = await publishedLayers(qgis, join(projectsDir, project, `${project}.qgs`));
          assert.deepEqual(
            published.sort(),
            [...layers.keys()].sort(),
            `${context}: QGIS Server publishes the layers of ${project}`,
          );
        }
        assert.deepEqual(
          projectProblems(qgis).slice(problemsBefore),
          [],
          `${context}: QGIS Server loads every project without complaint`,
        );

        for (const project of expected.keys()) {
          const started = Date.now();
          const write = writes.addStyle(project, `probe-${round}`, '#808080');
          assert.equal(
            (await current.call(write.method, write.path, write.body)).status,
            201,
            `${context}: ${write.what}`,
          );
          write.apply(expected);
          assert.ok(
            Date.now() - started < FIRST_WRITE_LIMIT_MS,
            `${context}: ${write.what} took ${Date.now() - started} ms`,
          );
        }
        t.diagnostic(`${context}: ${outcome.acknowledged} writes acknowledged, ${outcome.cutOff.length} cut off`);
      }
      t.diagnostic(`${roundsWithLeftovers} of ${ROUNDS} kills left something behind for the restart to clear`);
      t.diagnostic(`${filesPutBack} project files were put back to their journal's checkpoint, as a power cut may`);
      assert.ok(filesPutBack > 0, 'the writes went through journals, and the restarts rebuilt what was put back');
    },
  );

  for (const { what, laterLayers, damage, reason } of JOURNAL_DAMAGES) {
    it(`starts beside a project whose journal cannot be settled (${what}), refuses that project, keeps its files and serves the others`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'steward-damaged-'));
      const env = { STEWARD_QGISSERVER_URL: qgis.url, STEWARD_QGISSERVER_PROJECTS_DIR: dir };
      const first = await startApiProcess(env);
      for (const name of ['damaged', 'healthy']) {
        assert.equal((await first.call('POST', '/api/projects/', { name, author: 'me' })).status, 201);
        const layer = await first.call('POST', `/api/projects/${name}/layers`, polygonLayer('before', data.geopackage));
        assert.equal(layer.status, 201);
      }
      for (const name of laterLayers) {
        const layer = await first.call('POST', '/api/projects/damaged/layers', polygonLayer(name, data.geopackage));
        assert.equal(layer.status, 201);
      }
      await first.kill();
      const projectFile = join(dir, 'damaged', 'damaged.qgs');
      const files = [projectFile, journalPaths(projectFile).checkpoint, journalPaths(projectFile).journal];
      damage(projectFile);
      const before = files.map((file) => readFileSync(file));

      const second = await startApiProcess(env);
      try {
        assert.match(second.log(), reason);
        for (const [method, path, body] of [
          ['GET', '/api/projects/damaged', undefined],
          ['GET', '/api/projects/damaged/layers', undefined],
          ['POST', '/api/projects/damaged/layers', polygonLayer('after', data.geopackage)],
        ] as const) {
          const reply = await second.call(method, path, body);
          assert.equal(reply.status, 503, `${method} ${path}: ${JSON.stringify(reply.body)}`);
          assert.match(
            (reply.body as { error: string }).error,
            /^project "damaged" is unavailable: its journal could not be settled/,
          );
        }
        assert.deepEqual(
          files.map((file) => readFileSync(file)),
          before,
          'the project file, its checkpoint and its journal are as they were',
        );
        assert.equal(
          (await second.call('POST', '/api/projects/healthy/layers', polygonLayer('after', data.geopackage))).status,
          201,
        );
        assert.deepEqual((await getJson<string[]>(second, '/api/projects/healthy/layers')).sort(), ['after', 'before']);
        assert.deepEqual((await getJson<string[]>(second, '/api/projects')).sort(), ['damaged', 'healthy']);

        // The operator moves the journal and its checkpoint aside: the project is served as its file is.
        for (const file of files.slice(1)) renameSync(file, join(dir, `kept-${files.indexOf(file)}`));
        assert.deepEqual(await getJson<string[]>(second, '/api/projects/damaged/layers'), ['before']);
      } finally {
        await second.kill();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
