/**
 * /health/ready with projects in PostgreSQL: the storage check names the database while Steward's
 * role cannot connect to it, and is ready again once it can. On the production pool, QGIS Server
 * opens database projects through nginx and the API's FastCGI requests only with the database's
 * settings in the requests' parameters, and readiness fails when it cannot.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig, serviceFiles } from '../src/config.js';
import { distinctFreePorts, fcgiServerAddresses, QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { polygonsLayer } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { TEST_QGIS } from './support/qgis-runtime.js';
import { type Stack, startStack } from './support/stack.js';

interface Readiness {
  status: string;
  checks: Record<string, { ok: boolean; detail: string }>;
  error?: string;
}

describe('health checks with projects in PostgreSQL', () => {
  let db: TestDatabase;
  let data: Fixtures;
  let stack: Stack;

  const ready = async () => {
    const { status, body } = await stack.call('GET', '/health/ready');
    return { status, body: body as Readiness };
  };
  /** Whether Steward's role may open connections; taking it away also ends the ones it has. */
  const login = async (allowed: boolean) => {
    await db.sql(`ALTER ROLE ${db.quote(db.user)} ${allowed ? 'LOGIN' : 'NOLOGIN'}`);
    if (!allowed) await db.sql('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [db.user]);
  };

  before(async () => {
    db = await startTestDatabase();
    data = makeFixtures();
    stack = await startStack({ psqlService: db.service });
    assert.equal((await stack.call('POST', '/api/projects', { name: 'alpha', author: 'health' })).status, 201);
    assert.equal((await stack.call('POST', '/api/projects/alpha/layers', polygonsLayer(data))).status, 201);
  });
  after(async () => {
    await login(true).catch(() => {});
    await stack?.stop();
    await db?.stop();
  });

  it('is ready with the database reachable, names it while it is not, and is ready again once it is', async () => {
    const up = await ready();
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.deepEqual(up.body.checks['storage'], { ok: true, detail: 'database reachable' });
    assert.match(up.body.checks['qgis_server']?.detail ?? '', /GetCapabilities of project alpha answered/);
    await login(false);
    try {
      const down = await ready();
      assert.equal(down.status, 503, JSON.stringify(down.body));
      assert.equal(down.body.checks['storage']?.ok, false);
      // The pool's idle connection was just ended, or a new one is refused: either way the database is named.
      assert.match(
        down.body.checks['storage']?.detail ?? '',
        /^postgresql storage: PostgreSQL service "[^"]+" \(.+\) is not available: (.*not permitted to log in|terminating connection)/,
      );
      assert.match(down.body.error ?? '', /postgresql storage/);
    } finally {
      await login(true);
    }
    const again = await ready();
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });
});

describe('QGIS Server opening projects in PostgreSQL on the production pool', () => {
  let db: TestDatabase;
  let stack: Stack;
  let runDir = '';
  let bare: QgisFcgiPool | undefined;
  let blind: RunningServer | undefined;

  before(async () => {
    db = await startTestDatabase();
    stack = await startStack({ psqlService: db.service }, {}, 'postgresql', 'production');
    assert.equal((await stack.call('POST', '/api/projects', { name: 'alpha', author: 'health' })).status, 201);
    assert.equal((await stack.call('POST', '/api/projects/alpha/layers', polygonsLayer(makeFixtures()))).status, 201);
    // The same processes' environment (PGSERVICEFILE of the test database), but no parameters:
    // nginx sends none, and neither does an API without the settings in its own environment.
    runDir = mkdtempSync(join(tmpdir(), 'steward-bare-pool-'));
    bare = await QgisFcgiPool.start({
      deployDir: resolve(import.meta.dirname, '..', 'deploy'),
      runDir: join(runDir, 'run'),
      fcgiPorts: await distinctFreePorts(1),
      program: TEST_QGIS.mapservFcgi,
      requestSettings: [],
    });
    blind = await startServer({
      ...loadConfig({
        STEWARD_QGISSERVER_URL: bare.url,
        STEWARD_QGISSERVER_PROJECTS_DIR: join(runDir, 'projects'),
        STEWARD_QGISSERVER_PROJECTS_PSQL_SERVICE: db.service,
        STEWARD_LOGLEVEL: 'ERROR',
        STEWARD_LISTEN: '127.0.0.1:0',
        STEWARD_QGISSERVER_VERSION: TEST_QGIS.version,
      }),
      pgServiceFiles: serviceFiles(process.env),
      qgisServerFcgi: fcgiServerAddresses(bare.fcgiPorts),
      qgisRequestSettings: [],
    });
  });
  after(async () => {
    await blind?.close();
    await bare?.stop();
    await stack?.stop();
    await db?.stop();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  it('draws a database project through nginx and through the API over FastCGI, and is ready', async () => {
    const { body } = await stack.call('GET', '/api/projects/alpha/layers/polygons/map/url');
    const throughNginx = await fetch((body as { url: string }).url);
    assert.equal(throughNginx.headers.get('content-type'), 'image/png', await throughNginx.clone().text());
    const throughApi = await fetch(`${stack.api.url}/api/projects/alpha/layers/polygons/map`);
    assert.equal(throughApi.headers.get('content-type'), 'image/png', await throughApi.clone().text());
    const { status, body: readiness } = await stack.call('GET', '/health/ready');
    assert.equal(status, 200, JSON.stringify(readiness));
    assert.match(
      (readiness as Readiness).checks['qgis_server']?.detail ?? '',
      /GetCapabilities of project alpha answered/,
    );
  });

  it('cannot open it without the settings in the parameters, however its processes were started, and is not ready', async () => {
    const call = (method: string, path: string) => apiCall((blind as RunningServer).url, method, path);
    const map = await fetch(`${(blind as RunningServer).url}/api/projects/alpha/layers/polygons/map`);
    assert.notEqual(map.headers.get('content-type'), 'image/png');
    const { status, body } = await call('GET', '/health/ready');
    const readiness = body as Readiness;
    assert.equal(status, 503, JSON.stringify(body));
    assert.deepEqual(readiness.checks['storage'], { ok: true, detail: 'database reachable' });
    assert.equal(readiness.checks['qgis_server']?.ok, false);
    assert.match(readiness.checks['qgis_server']?.detail ?? '', /^QGIS Server: cannot open database project alpha: /);
  });
});
