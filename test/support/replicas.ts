/**
 * Steward replicas on one PostgreSQL database, as an operator runs them behind a load balancer:
 * each an API process with a projects folder of its own and a QGIS Server of its own, whose
 * monitoring plugin registers with it (Steward tells the plugins of every replica when a database
 * project changes). The one place tests start replicas, so that the stack they run on can change:
 * the production one, a pool of qgis_mapserv.fcgi behind nginx a replica, the API's maps over
 * FastCGI to its pool's processes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../../src/runtime/ports.js';
import { distinctFreePorts, fcgiAddresses, type QgisFcgiPool } from '../../src/runtime/qgis-fcgi-pool.js';
import { type ApiProcess, startApiProcess } from './api-process.js';
import { type TestDatabase } from './postgres.js';
import { TEST_QGIS } from './qgis-runtime.js';
import { startTestPool } from './stack.js';
import { pluginEnv, untilRegistered } from './test-storage.js';

/** QGIS Server processes of each replica's pool. */
const POOL_PROCESSES = 2;

export interface Replica {
  api: ApiProcess;
  qgis: QgisFcgiPool;
  /** The replica's own projects folder (data folders of database projects). */
  projectsDir: string;
}

export interface Replicas {
  list: Replica[];
  stop(): Promise<void>;
}

async function startReplica(db: TestDatabase, root: string, index: number): Promise<Replica> {
  const projectsDir = mkdtempSync(join(root, `replica-${index}-`));
  const [qgisPort, monitoringPort] = [await freePort(), await freePort()];
  const fcgiPorts = await distinctFreePorts(POOL_PROCESSES);
  // The API first, so that the plugins' first connections find it.
  const api = await startApiProcess({
    PGSERVICEFILE: db.serviceFile,
    STEWARD_QGISSERVER_PROJECTS_PSQL_SERVICE: db.service,
    STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
    STEWARD_QGISSERVER_URL: `http://127.0.0.1:${qgisPort}/ows/`,
    STEWARD_QGISSERVER_FCGI: fcgiAddresses(fcgiPorts),
    STEWARD_QGISSERVER_VERSION: TEST_QGIS.version,
    STEWARD_QGISSERVER_MONITORING_PORT: String(monitoringPort),
  });
  let qgis: QgisFcgiPool | undefined;
  try {
    qgis = await startTestPool(join(root, `run-${index}`), {
      port: qgisPort,
      fcgiPorts,
      env: { PGSERVICEFILE: db.serviceFile, ...pluginEnv(monitoringPort) },
    });
    await untilRegistered((method, path) => api.call(method, path));
    return { api, qgis, projectsDir };
  } catch (error) {
    await qgis?.stop();
    await api.kill();
    throw error;
  }
}

/** Starts `count` replicas on the test database, one after the other. */
export async function startReplicas(db: TestDatabase, count: number): Promise<Replicas> {
  const root = mkdtempSync(join(tmpdir(), 'steward-replicas-'));
  const list: Replica[] = [];
  const stop = async (): Promise<void> => {
    for (const replica of list) {
      await replica.qgis.stop();
      await replica.api.kill();
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < count; index++) list.push(await startReplica(db, root, index));
  } catch (error) {
    await stop();
    throw error;
  }
  return { list, stop };
}
