/**
 * /health/live and /health/ready against real engines, with real faults: MapProxy and QGIS Server
 * stopped and started again, the projects folder taken away and put back.
 */
import assert from 'node:assert/strict';
import { renameSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';

import { MapProxyProcess } from '../src/runtime/mapproxy.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { type CacheStack, polygonsLayer, startCacheStack } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';

const TOKEN = 'health-test-token';

interface Readiness {
  status: string;
  checks: Record<string, { ok: boolean; detail: string }>;
  error?: string;
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
    assert.deepEqual(Object.keys(body.checks).sort(), ['mapproxy', 'monitoring', 'qgis_server', 'storage']);
    for (const [name, check] of Object.entries(body.checks)) assert.ok(check.ok, `${name}: ${check.detail}`);
  }

  async function assertDown(check: string, naming: RegExp): Promise<void> {
    const { status, body } = await ready();
    assert.equal(status, 503, JSON.stringify(body));
    assert.equal(body.status, 'down');
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
});
