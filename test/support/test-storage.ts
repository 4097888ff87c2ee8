/**
 * Where a test stack keeps its projects: in its projects folder, or in a PostgreSQL database of
 * its own (STEWARD_TEST_STORAGE=postgresql, or asked for), and how a test reads what was stored.
 * Projects are then in schema `public`, which the API takes when a path names no schema.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import Database from 'better-sqlite3';
import { unzipSync } from 'fflate';

import { type Config } from '../../src/config.js';
import { freePort } from '../../src/runtime/ports.js';
import { HISTORY_FILE } from '../../src/storage/sqlite-versions.js';
import { startTestDatabase } from './postgres.js';
import { until } from './wait.js';

export type StorageKind = 'filesystem' | 'postgresql';

const PLUGIN_PATH = resolve(import.meta.dirname, '..', '..', 'plugin');
const REGISTRATION_TIMEOUT_MS = 30_000;

export type Call = (method: string, path: string) => Promise<{ status: number; body: unknown }>;

export interface TestStorage {
  kind: StorageKind;
  /** The API's settings for this storage. */
  config: Partial<Config>;
  /** QGIS Server's environment for this storage. */
  qgisEnv: Record<string, string>;
  /** Waits until the stack is ready for this storage: QGIS Server's plugin heard by the API. */
  ready(call: Call): Promise<void>;
  /** The XML of a project as stored. */
  projectXml(name: string): Promise<string>;
  /** The QML of a project's style as stored; undefined when there is none. */
  styleQml(project: string, style: string): Promise<string | undefined>;
  /** Makes the stored versions as a release before versions kept their layers left them: no `layers` column. */
  dropVersionLayers(): Promise<void>;
  stop(): Promise<void>;
}

/** QGIS Server's environment for the monitoring plugin to register with the API's monitoring port. */
export function pluginEnv(monitoringPort: number): Record<string, string> {
  return { QGIS_PLUGINPATH: PLUGIN_PATH, STEWARD_HOST: '127.0.0.1', STEWARD_PORT: String(monitoringPort) };
}

/** Waits until a QGIS Server instance has registered with the API `call` reaches. */
export async function untilRegistered(call: Call): Promise<void> {
  const registered = async (): Promise<boolean> =>
    (((await call('GET', '/api/instances')).body as { servers?: unknown[] }).servers?.length ?? 0) > 0;
  await until('a QGIS Server to register', registered, REGISTRATION_TIMEOUT_MS, 100);
}

/** The ids of the QGIS Server instances registered with the API `call` reaches. */
export async function registeredIds(call: Call): Promise<string[]> {
  return ((await call('GET', '/api/instances')).body as { servers: Array<{ id: string }> }).servers.map(({ id }) => id);
}

/** The storage STEWARD_TEST_STORAGE names (`filesystem` when unset). */
export function selectedStorage(): StorageKind {
  const wanted = process.env['STEWARD_TEST_STORAGE'] ?? 'filesystem';
  if (wanted !== 'filesystem' && wanted !== 'postgresql') {
    throw new Error(`STEWARD_TEST_STORAGE must be filesystem or postgresql, not "${wanted}"`);
  }
  return wanted;
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The monitoring plugin in QGIS Server, registered with the API before the stack is ready. */
async function withPlugin(): Promise<Pick<TestStorage, 'config' | 'qgisEnv' | 'ready'>> {
  const monitoringPort = await freePort();
  return { config: { monitoringPort }, qgisEnv: pluginEnv(monitoringPort), ready: (call) => untilRegistered(call) };
}

/** Projects in the stack's folder; QGIS Server runs with the plugin, as `npm start` runs it. */
async function filesystemStorage(projectsDir: string, plugin: boolean): Promise<TestStorage> {
  const without = { config: {}, qgisEnv: {}, ready: async () => undefined };
  return {
    kind: 'filesystem',
    ...(plugin ? await withPlugin() : without),
    projectXml: async (name) => readFileSync(join(projectsDir, name, `${name}.qgs`), 'utf8'),
    styleQml: async (project, style) => readOrUndefined(join(projectsDir, project, `${style}.qml`)),
    dropVersionLayers: async () => {
      const db = new Database(join(projectsDir, HISTORY_FILE));
      db.exec('ALTER TABLE versions DROP COLUMN layers');
      db.close();
    },
    stop: async () => undefined,
  };
}

/**
 * A database of the test's own. QGIS Server keeps a database project cached until its plugin is
 * told the project changed, so it runs with the plugin, and the stack is ready once it registered.
 */
async function postgresStorage(): Promise<TestStorage> {
  const db = await startTestDatabase();
  const plugin = await withPlugin();
  return {
    kind: 'postgresql',
    ...plugin,
    config: { psqlService: db.service, ...plugin.config },
    async projectXml(name) {
      const [row] = await db.sql<{ content: Buffer }>('SELECT content FROM public.qgis_projects WHERE name = $1', [
        name,
      ]);
      const entry = row && unzipSync(new Uint8Array(row.content))[`${name}.qgs`];
      if (!entry) throw new Error(`project "${name}" is not stored`);
      return Buffer.from(entry).toString('utf8');
    },
    async styleQml(project, style) {
      const [table] = await db.sql<{ found: boolean }>(
        `SELECT to_regclass('public.steward_styles') IS NOT NULL AS found`,
      );
      if (!table?.found) return undefined;
      const rows = await db.sql<{ qml: string }>(
        'SELECT qml FROM public.steward_styles WHERE project = $1 AND name = $2',
        [project, style],
      );
      return rows[0]?.qml;
    },
    async dropVersionLayers() {
      await db.sql('ALTER TABLE public.steward_versions DROP COLUMN layers');
    },
    stop: () => db.stop(),
  };
}

/** The database a test brought itself (it gave the stack its service): the test reads what is stored there. */
function broughtDatabase(): TestStorage {
  const elsewhere = (): Promise<never> => Promise.reject(new Error('read it from the database the test brought'));
  return {
    kind: 'postgresql',
    config: {},
    qgisEnv: {},
    ready: async () => undefined,
    projectXml: elsewhere,
    styleQml: elsewhere,
    dropVersionLayers: elsewhere,
    stop: async () => undefined,
  };
}

/**
 * The storage of a stack: `kind`, unless the test brought a database (`brought`, its service).
 * Projects in files are served with the plugin unless the test brings its own (`plugin` false).
 */
export function openTestStorage(
  kind: StorageKind,
  projectsDir: string,
  { brought, plugin }: { brought: string | undefined; plugin: boolean },
): Promise<TestStorage> {
  if (brought !== undefined) return Promise.resolve(broughtDatabase());
  return kind === 'postgresql' ? postgresStorage() : filesystemStorage(projectsDir, plugin);
}
