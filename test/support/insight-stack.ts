/**
 * A Steward API with monitoring on, and real QGIS Servers started with the steward_monitor plugin,
 * each resolved once it has registered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { type RunningServer, startServer } from '../../src/app/server.js';
import { loadConfig } from '../../src/config.js';
import { freePort } from '../../src/runtime/ports.js';
import { QgisServerProcess } from '../../src/runtime/qgis-server.js';
import { apiCall } from './http.js';
import { waitFor } from './wait.js';

export const PLUGIN_PATH = resolve(import.meta.dirname, '..', '..', 'plugin');

export interface InsightStack {
  api: RunningServer;
  workDir: string;
  /** The port of the QGIS Server the API sends its own WMS requests to (STEWARD_QGISSERVER_URL). */
  qgisPort: number;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** Starts a QGIS Server with the plugin and `env`; resolves once it is registered, with its id. */
  startQgis(env?: NodeJS.ProcessEnv, port?: number): Promise<{ qgis: QgisServerProcess; id: string }>;
  stop(): Promise<void>;
}

async function instanceIds(call: InsightStack['call']): Promise<string[]> {
  const { body } = await call('GET', '/api/instances');
  return (body as { servers: { id: string }[] }).servers.map(({ id }) => id);
}

export async function startInsightStack(env: Record<string, string> = {}): Promise<InsightStack> {
  const workDir = mkdtempSync(join(tmpdir(), 'steward-insight-'));
  const [monitoringPort, qgisPort] = [await freePort(), await freePort()];
  const api = await startServer(
    loadConfig({
      STEWARD_QGISSERVER_URL: `http://127.0.0.1:${qgisPort}/ows/`,
      STEWARD_QGISSERVER_PROJECTS_DIR: join(workDir, 'projects'),
      STEWARD_LOGLEVEL: 'ERROR',
      STEWARD_LISTEN: '127.0.0.1:0',
      STEWARD_QGISSERVER_MONITORING_PORT: String(monitoringPort),
      ...env,
    }),
  );
  const call: InsightStack['call'] = (method, path, body) => apiCall(api.url, method, path, body);
  const started: QgisServerProcess[] = [];
  const plugin = { QGIS_PLUGINPATH: PLUGIN_PATH, STEWARD_HOST: '127.0.0.1', STEWARD_PORT: String(monitoringPort) };
  return {
    api,
    workDir,
    qgisPort,
    call,
    async startQgis(extra = {}, port) {
      const known = new Set(await instanceIds(call));
      const qgis = await QgisServerProcess.start({
        ...(port === undefined ? {} : { port }),
        env: { ...plugin, ...extra },
      });
      started.push(qgis);
      const registered = async () => (await instanceIds(call)).find((id) => !known.has(id));
      return { qgis, id: await waitFor('the instance to register', registered, 15_000) };
    },
    async stop() {
      for (const qgis of started) await qgis.stop();
      await api.close();
      rmSync(workDir, { recursive: true, force: true });
    },
  };
}
