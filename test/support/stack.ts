import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type RunningServer, startServer } from '../../src/app/server.js';
import { type Config, loadConfig, serviceFiles } from '../../src/config.js';
import { type QgisServerOptions, type QgisServerProcess } from '../../src/runtime/qgis-server.js';
import { readS3Settings } from '../../src/s3-settings.js';
import { apiCall } from './http.js';
import { startTestQgis, TEST_QGIS } from './qgis-runtime.js';
import { openTestStorage, selectedStorage, type StorageKind, type TestStorage } from './test-storage.js';

export interface Stack {
  qgis: QgisServerProcess;
  api: RunningServer;
  projectsDir: string;
  /** Where the projects are stored, and what is stored there. */
  storage: TestStorage;
  /** Sends a request to the API and parses a JSON reply. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
}

/**
 * Starts a real QGIS Server of the tested release (TEST_QGIS) and the API, told that release's
 * version, on loopback ports with a fresh projects folder, projects stored in `storage`
 * (STEWARD_TEST_STORAGE by default: test-storage.ts).
 */
export async function startStack(
  overrides: Partial<Config> = {},
  qgisOptions: QgisServerOptions = {},
  storageKind: StorageKind = selectedStorage(),
): Promise<Stack> {
  const projectsDir = mkdtempSync(join(tmpdir(), 'steward-projects-'));
  const storage = await openTestStorage(storageKind, projectsDir, overrides.psqlService);
  const qgis = await startTestQgis({ ...qgisOptions, env: { ...storage.qgisEnv, ...qgisOptions.env } });
  const api = await startServer({
    ...loadConfig({
      STEWARD_QGISSERVER_URL: qgis.url,
      STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
      STEWARD_LOGLEVEL: 'ERROR',
      STEWARD_LISTEN: '127.0.0.1:0',
      STEWARD_QGISSERVER_VERSION: TEST_QGIS.version,
    }),
    // Tests set up S3 and PostgreSQL in this process's environment, as an operator would.
    s3: readS3Settings(process.env),
    pgServiceFiles: serviceFiles(process.env),
    ...storage.config,
    ...overrides,
  });
  await storage.ready((method, path) => apiCall(api.url, method, path));

  return {
    qgis,
    api,
    projectsDir,
    storage,
    call: (method, path, body) => apiCall(api.url, method, path, body),
    async stop() {
      await api.close();
      await qgis.stop();
      await storage.stop();
      rmSync(projectsDir, { recursive: true, force: true });
    },
  };
}
