/**
 * A start-up that fails late closes what it opened: the API on a PostgreSQL store with monitoring
 * on, failing to listen on its monitoring port (the last step of the services) or on its API port
 * (after them), leaves no connection to the database and its monitoring port free.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startServer } from '../src/app/server.js';
import { loadConfig, serviceFiles } from '../src/config.js';
import { accepts, freePort } from '../src/runtime/ports.js';
import { after, before, describe, it } from './support/node-test.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { until } from './support/wait.js';

describe('a start-up that fails after opening the database', () => {
  let db: TestDatabase;
  let projectsDir = '';
  let taken: Server;
  let takenPort = 0;

  before(async () => {
    db = await startTestDatabase();
    projectsDir = mkdtempSync(join(tmpdir(), 'steward-start-up-'));
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    takenPort = (taken.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise((resolve) => taken?.close(resolve));
    await db?.stop();
    rmSync(projectsDir, { recursive: true, force: true });
  });

  const connections = async (): Promise<number> =>
    Number(
      (await db.sql<{ count: string }>('SELECT count(*) FROM pg_stat_activity WHERE usename = $1', [db.user]))[0]
        ?.count,
    );

  const start = (listen: number, monitoring: number): ReturnType<typeof startServer> =>
    startServer({
      ...loadConfig({
        STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/ows/',
        STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
        STEWARD_QGISSERVER_PROJECTS_PSQL_SERVICE: db.service,
        STEWARD_QGISSERVER_MONITORING_PORT: String(monitoring),
        STEWARD_QGISSERVER_VERSION: '3.22',
        STEWARD_LOGLEVEL: 'ERROR',
        STEWARD_LISTEN: `127.0.0.1:${listen}`,
      }),
      pgServiceFiles: serviceFiles(process.env),
    });

  /** Whether nothing of Steward's is connected to the database; pg_stat_activity lags the closes a little. */
  const disconnected = (): Promise<void> =>
    until('the connections to close', async () => (await connections()) === 0, 5000);

  it('holds connections and its monitoring port while it runs, and frees them on close', async () => {
    const monitoring = await freePort();
    const server = await start(0, monitoring);
    assert.ok((await connections()) > 0, 'a running API holds a connection to the database');
    assert.equal(await accepts('127.0.0.1', monitoring), true);
    await server.close();
    await disconnected();
    assert.equal(await accepts('127.0.0.1', monitoring), false);
  });

  it('closes everything when its monitoring port is taken', async () => {
    await assert.rejects(start(0, takenPort), /EADDRINUSE/);
    await disconnected();
  });

  it('closes everything, the monitoring port too, when its API port is taken', async () => {
    const monitoring = await freePort();
    await assert.rejects(start(takenPort, monitoring), /EADDRINUSE/);
    await disconnected();
    assert.equal(await accepts('127.0.0.1', monitoring), false);
  });
});
