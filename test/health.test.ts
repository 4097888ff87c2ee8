/**
 * /health/live and /health/ready against real engines, with real faults: MapProxy and QGIS Server
 * stopped and started again, the projects folder taken away and put back, the monitoring port
 * closed and opened again, a QGIS Server instance with the plugin killed and started again.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { type FastifyInstance } from 'fastify';
import { pino } from 'pino';

import { buildApp } from '../src/http/app.js';
import { healthRoutes } from '../src/http/routes/health.js';
import { HealthChecks } from '../src/insight/health.js';
import { Metrics } from '../src/insight/metrics.js';
import { InstanceRegistry } from '../src/monitor/registry.js';
import { MapProxyProcess } from '../src/runtime/mapproxy.js';
import { freePort } from '../src/runtime/ports.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { FilesystemStore } from '../src/storage/filesystem-store.js';
import { type CacheStack, polygonsLayer, startCacheStack } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { startTestQgis } from './support/qgis-runtime.js';
import { waitFor } from './support/wait.js';

const TOKEN = 'health-test-token';

interface Readiness {
  status: string;
  checks: Record<string, { ok: boolean; detail: string }>;
  error?: string;
  code?: string;
}

describe('health checks', () => {
  let cs: CacheStack;
  let data: Fixtures;
  /** Started by the tests in place of the stack's own, which the stack's stop no longer reaches. */
  const restarted: { stop(): Promise<void> }[] = [];

  async function call(method: string, path: string, body?: unknown, token?: string): Promise<Response> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    return fetch(cs.stack.api.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async function ready(): Promise<{ status: number; body: Readiness }> {
    const response = await call('GET', '/health/ready');
    return { status: response.status, body: (await response.json()) as Readiness };
  }

  async function assertReady(): Promise<void> {
    const { status, body } = await ready();
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.status, 'ok');
    assert.deepEqual(Object.keys(body.checks).sort(), ['disk', 'mapproxy', 'monitoring', 'qgis_server', 'storage']);
    for (const [name, check] of Object.entries(body.checks)) assert.ok(check.ok, `${name}: ${check.detail}`);
  }

  async function assertDown(check: string, naming: RegExp): Promise<void> {
    const { status, body } = await ready();
    assert.equal(status, 503, JSON.stringify(body));
    assert.equal(body.status, 'down');
    assert.equal(body.code, 'not_ready');
    assert.match(body.error ?? '', naming);
    const down = Object.entries(body.checks).filter(([, result]) => !result.ok);
    assert.deepEqual(
      down.map(([name]) => name),
      [check],
      JSON.stringify(body.checks),
    );
  }

  before(async () => {
    data = makeFixtures();
    cs = await startCacheStack({ apiToken: TOKEN, monitoringPort: 0 });
    const created = await call('POST', '/api/projects', { name: 'alpha', author: 'health' }, TOKEN);
    assert.equal(created.status, 201, await created.text());
    const layer = await call('POST', '/api/projects/alpha/layers', polygonsLayer(data), TOKEN);
    assert.equal(layer.status, 201, await layer.text());
  });
  after(async () => {
    await cs.stop();
    for (const process of restarted) await process.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('answers live and ready without the token, while the API needs it', async () => {
    const live = await call('GET', '/health/live');
    assert.equal(live.status, 200);
    assert.deepEqual(await live.json(), { status: 'ok' });
    assert.equal((await call('GET', '/api/projects')).status, 401);
    await assertReady();
    const { body } = await ready();
    assert.match(body.checks['qgis_server']?.detail ?? '', /GetCapabilities of project alpha answered/);
  });

  it('names MapProxy while it is stopped, and is ready again once it is back', async () => {
    const port = Number(new URL(cs.mapproxy.url).port);
    await cs.mapproxy.stop();
    await assertDown('mapproxy', /MapProxy/);
    cs.mapproxy = await MapProxyProcess.start(cs.configDir, { port });
    restarted.push(cs.mapproxy);
    await assertReady();
  });

  it('names QGIS Server while it is stopped, and is ready again once it is back', async () => {
    const port = Number(new URL(cs.stack.qgis.url).port);
    await cs.stack.qgis.stop();
    await assertDown('qgis_server', /QGIS Server/);
    cs.stack.qgis = await QgisServerProcess.start({ port });
    restarted.push(cs.stack.qgis);
    await assertReady();
  });

  it('names the storage while the projects folder is gone, and is ready again once it is back', async () => {
    const away = `${cs.stack.projectsDir}.away`;
    renameSync(cs.stack.projectsDir, away);
    try {
      await assertDown('storage', /filesystem storage: .*ENOENT/);
    } finally {
      renameSync(away, cs.stack.projectsDir);
    }
    await assertReady();
  });

  it('stays ready while QGIS Server refuses the project it is asked for, saying so, and names it served once repaired', async () => {
    const qgs = cs.qgsFile('alpha');
    renameSync(data.geopackage, `${data.geopackage}.away`);
    try {
      writeFileSync(qgs, readFileSync(qgs)); // QGIS Server reads a rewritten project again
      const { status, body } = await ready();
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(body.checks['qgis_server'], {
        ok: true,
        detail: 'answers, but refuses project alpha (see its check)',
      });
    } finally {
      renameSync(`${data.geopackage}.away`, data.geopackage);
    }
    writeFileSync(qgs, readFileSync(qgs));
    await assertReady();
    const { body } = await ready();
    assert.match(body.checks['qgis_server']?.detail ?? '', /GetCapabilities of project alpha answered/);
  });
});

describe('readiness of the monitoring port, with a QGIS Server instance registered through it', () => {
  const registry = new InstanceRegistry();
  const projectsDir = mkdtempSync(join(tmpdir(), 'steward-health-monitoring-'));
  let monitoringPort = 0;
  let qgis: QgisServerProcess;
  let app: FastifyInstance;
  let url = '';

  async function startInstance(port?: number): Promise<QgisServerProcess> {
    const env = {
      QGIS_PLUGINPATH: resolve(import.meta.dirname, '..', 'plugin'),
      STEWARD_HOST: '127.0.0.1',
      STEWARD_PORT: String(monitoringPort),
    };
    const started = await startTestQgis({ env, ...(port === undefined ? {} : { port }) });
    await waitFor('the instance to register', () => registry.list().length === 1, 15_000);
    return started;
  }

  async function ready(): Promise<{ status: number; body: Readiness }> {
    const response = await fetch(`${url}/health/ready`);
    return { status: response.status, body: (await response.json()) as Readiness };
  }

  before(async () => {
    monitoringPort = await freePort();
    await registry.start(monitoringPort, '127.0.0.1');
    qgis = await startInstance();
    const health = new HealthChecks({
      store: new FilesystemStore(projectsDir),
      qgisServerUrl: qgis.url,
      schema: 'public',
      registry,
      monitoringHost: '127.0.0.1',
    });
    const metrics = new Metrics({
      registry,
      inventory: async () => ({ projects: 0, layers: 0 }),
      jobs: async () => [],
    });
    app = await buildApp(pino({ level: 'silent' }), [healthRoutes(health, metrics)], { apiToken: undefined });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });

  after(async () => {
    await app?.close();
    await qgis?.stop();
    await registry.close();
    rmSync(projectsDir, { recursive: true, force: true });
  });

  it('is ready with the monitoring port listening, and counts the instance connected', async () => {
    const { status, body } = await ready();
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body.checks['monitoring'], {
      ok: true,
      detail: `listening on port ${monitoringPort}, 1 instance(s) connected`,
    });
  });

  it('names the monitoring port while it does not listen, and is ready again once it does', async () => {
    await registry.close();
    const down = await ready();
    assert.equal(down.status, 503, JSON.stringify(down.body));
    assert.deepEqual(
      Object.entries(down.body.checks)
        .filter(([, check]) => !check.ok)
        .map(([name]) => name),
      ['monitoring'],
    );
    assert.match(down.body.error ?? '', /monitoring port/);
    await registry.start(monitoringPort, '127.0.0.1');
    await waitFor('the instance to connect again', () => registry.list().length === 1, 15_000);
    const back = await ready();
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.match(back.body.checks['monitoring']?.detail ?? '', /1 instance\(s\) connected$/);
  });

  it('shows an instance killed: QGIS Server down, no instance connected, and ready once it is back', async () => {
    const port = Number(new URL(qgis.url).port);
    const exited = once(qgis.child, 'exit');
    qgis.child.kill('SIGKILL');
    await exited;
    await waitFor('the instance to be forgotten', () => registry.list().length === 0);
    const down = await ready();
    assert.equal(down.status, 503, JSON.stringify(down.body));
    assert.equal(down.body.checks['qgis_server']?.ok, false);
    assert.match(down.body.error ?? '', /QGIS Server/);
    assert.deepEqual(down.body.checks['monitoring'], {
      ok: true,
      detail: `listening on port ${monitoringPort}, 0 instance(s) connected`,
    });
    qgis = await startInstance(port);
    const back = await ready();
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.match(back.body.checks['monitoring']?.detail ?? '', /1 instance\(s\) connected$/);
  });
});
