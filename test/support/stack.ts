import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { type RunningServer, startServer } from '../../src/app/server.js';
import { type Config, loadConfig, qgisRequestSettings, serviceFiles } from '../../src/config.js';
import { freePort } from '../../src/runtime/ports.js';
import {
  distinctFreePorts,
  fcgiServerAddresses,
  QgisFcgiPool,
  type TilesGate,
} from '../../src/runtime/qgis-fcgi-pool.js';
import { type QgisServerOptions } from '../../src/runtime/qgis-server.js';
import { type Supervisor } from '../../src/runtime/supervisor.js';
import { readS3Settings } from '../../src/s3-settings.js';
import { apiCall } from './http.js';
import { type TestQgisServer } from './qgis.js';
import { startTestQgis, TEST_QGIS } from './qgis-runtime.js';
import { openTestStorage, selectedStorage, type StorageKind, type TestStorage } from './test-storage.js';

const DEPLOY = resolve(import.meta.dirname, '..', '..', 'deploy');
/** Processes of a test's production pool: two, so that one can die while the other serves. */
const POOL_PROCESSES = 2;

/**
 * Which QGIS Server a stack runs: `production`, the pool `npm start` runs (nginx in front of
 * qgis_mapserv.fcgi processes, the API's maps over FastCGI to them), or `development`, one
 * qgis_mapserver (tests about it, and tests that read one process's log).
 */
export type StackKind = 'production' | 'development';

export interface Stack {
  qgis: TestQgisServer;
  /** The production pool, when the stack runs one. */
  pool: QgisFcgiPool | undefined;
  api: RunningServer;
  projectsDir: string;
  /** Where the projects are stored, and what is stored there. */
  storage: TestStorage;
  /** Sends a request to the API and parses a JSON reply. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /**
   * Stops the API and starts it again with the same settings, as after an operator's restart
   * (`whileStopped` run in between): `api` is then the new one.
   */
  restartApi(whileStopped?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

/** STEWARD_TEST_STACK (`production` or `development`); `production` when unset. */
export function selectedStackKind(): StackKind {
  const wanted = process.env['STEWARD_TEST_STACK'] ?? 'production';
  if (wanted !== 'production' && wanted !== 'development') {
    throw new Error(`STEWARD_TEST_STACK must be production or development, not "${wanted}"`);
  }
  return wanted;
}

/**
 * The production pool of the tested release (TEST_QGIS) on `options.port`: nginx rendered from
 * deploy/, sending the FastCGI parameters of the pool's environment (PGSERVICEFILE and the like).
 */
export async function startTestPool(
  runDir: string,
  options: QgisServerOptions & {
    processes?: number;
    fcgiPorts?: number[];
    supervisor?: Supervisor;
    stewardApi?: string;
    publicUrl?: string;
    requestSettings?: ReadonlyArray<readonly [string, string]>;
    tilesGate?: TilesGate;
    startProcesses?: boolean;
  } = {},
): Promise<QgisFcgiPool> {
  return QgisFcgiPool.start({
    deployDir: DEPLOY,
    runDir,
    fcgiPorts: options.fcgiPorts ?? (await distinctFreePorts(options.processes ?? POOL_PROCESSES)),
    program: TEST_QGIS.mapservFcgi,
    ...(options.port !== undefined && { port: options.port }),
    ...(options.env && { env: options.env }),
    ...(options.onLog && { onLog: options.onLog }),
    ...(options.supervisor && { supervisor: options.supervisor }),
    ...(options.stewardApi !== undefined && { stewardApi: options.stewardApi }),
    ...(options.publicUrl !== undefined && { publicUrl: options.publicUrl }),
    ...(options.requestSettings && { requestSettings: options.requestSettings }),
    ...(options.tilesGate && { tilesGate: options.tilesGate }),
    ...(options.startProcesses !== undefined && { startProcesses: options.startProcesses }),
  });
}

/** The API's settings for the production pool: its maps over FastCGI. */
function poolSettings(pool: QgisFcgiPool | undefined): Partial<Config> {
  if (!pool) return {};
  return {
    qgisServerFcgi: fcgiServerAddresses(pool.fcgiPorts),
    // As an operator's API: the settings of its environment (PGSERVICEFILE of the test database).
    qgisRequestSettings: qgisRequestSettings(process.env),
  };
}

/**
 * Starts a real QGIS Server of the tested release (TEST_QGIS), on `kind`'s stack, and the API,
 * told that release's version, on loopback ports with a fresh projects folder, projects stored in
 * `storage` (STEWARD_TEST_STORAGE by default: test-storage.ts). With access control on, the
 * production pool's nginx serves MapProxy too when given `tilesGate`, asking the API as it does
 * before QGIS Server.
 */
export async function startStack(
  overrides: Partial<Config> = {},
  qgisOptions: QgisServerOptions & { tilesGate?: TilesGate } = {},
  storageKind: StorageKind = selectedStorage(),
  kind: StackKind = selectedStackKind(),
): Promise<Stack> {
  const projectsDir = mkdtempSync(join(tmpdir(), 'steward-projects-'));
  // A test that sets monitoringPort (undefined included: monitoring off) brings its own plugin, or none.
  const plugin = !('monitoringPort' in overrides);
  const storage = await openTestStorage(storageKind, projectsDir, { brought: overrides.psqlService, plugin });
  const options = { ...qgisOptions, env: { ...storage.qgisEnv, ...qgisOptions.env } };
  const runDir = mkdtempSync(join(tmpdir(), 'steward-pool-'));
  // With access control on, nginx asks the API about each request: the API's port is chosen first.
  const apiPort = overrides.apiToken !== undefined && kind === 'production' ? await freePort() : 0;
  const stewardApi = apiPort === 0 ? {} : { stewardApi: `127.0.0.1:${apiPort}` };
  // The public address, as npm start has nginx advertise it.
  const publicUrl = overrides.publicOwsUrl === undefined ? {} : { publicUrl: overrides.publicOwsUrl };
  const pool =
    kind === 'production' ? await startTestPool(runDir, { ...options, ...stewardApi, ...publicUrl }) : undefined;
  const qgis = pool ?? (await startTestQgis(options));
  const settings: Config = {
    ...loadConfig({
      STEWARD_QGISSERVER_URL: qgis.url,
      STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
      STEWARD_LOGLEVEL: 'ERROR',
      STEWARD_LISTEN: `127.0.0.1:${apiPort}`,
      STEWARD_QGISSERVER_VERSION: TEST_QGIS.version,
    }),
    // Tests set up S3 and PostgreSQL in this process's environment, as an operator would.
    s3: readS3Settings(process.env),
    pgServiceFiles: serviceFiles(process.env),
    ...poolSettings(pool),
    ...storage.config,
    ...overrides,
  };
  let api = await startServer(settings);
  const ready = () => storage.ready((method, path) => apiCall(api.url, method, path, undefined, overrides.apiToken));
  await ready();

  return {
    qgis,
    pool,
    get api() {
      return api;
    },
    projectsDir,
    storage,
    call: (method, path, body) => apiCall(api.url, method, path, body),
    async restartApi(whileStopped) {
      await api.close();
      await whileStopped?.();
      api = await startServer(settings);
      // QGIS Server's plugin registers with the new API anew: until then a change is told to no instance.
      await ready();
    },
    async stop() {
      await api.close();
      await qgis.stop();
      await storage.stop();
      for (const dir of [projectsDir, runDir]) rmSync(dir, { recursive: true, force: true });
    },
  };
}
