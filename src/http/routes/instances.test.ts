import assert from 'node:assert/strict';

import type { FastifyInstance } from 'fastify';

import { type Answerer, FakePlugin, hello, instancesApp } from '../../../test/support/monitoring.js';
import { after, before, describe, test } from '../../../test/support/node-test.js';
import { waitFor } from '../../../test/support/wait.js';
import type { InstanceSummary } from '../../monitor/connection.js';
import { InstanceRegistry } from '../../monitor/registry.js';

const metadata = {
  cache: { projects: [] },
  plugins: ['steward_monitor'],
  providers: ['ogr', ''],
  versions: { gdal: '3.6.2', python: '3.11.2', qt: '5.15.8', qgis: '3.40.6', qgis_release: 'Bratislava' },
};
const stats = { count: 1, service: 'WMS', request: 'GetCapabilities', project: '', duration: 4 };
const results: Record<string, unknown> = { metadata, stats, logs: { lines: ['one', 'two'] } };
const answering: Answerer = ({ id, method }) => ({ id, result: results[method] });

const TOKEN = 'instance-routes-secret';

describe('instance routes', () => {
  const registry = new InstanceRegistry({ replyTimeoutMs: 200, token: TOKEN });
  let app: FastifyInstance;
  let plugin: FakePlugin;
  let id = '';
  let registering = 0;

  before(async () => {
    await registry.start(0, '127.0.0.1');
    registering = Date.now();
    plugin = await FakePlugin.connect(registry.port, hello(TOKEN, '3.40.6-Bratislava'), answering);
    id = await waitFor('registration', () => registry.list()[0]?.id);
    app = await instancesApp(registry);
  });
  after(async () => {
    plugin.close();
    await app.close();
    await registry.close();
  });

  test('lists the servers, with and without a trailing slash', async () => {
    for (const url of ['/api/instances', '/api/instances/']) {
      const response = await app.inject({ url });
      assert.equal(response.statusCode, 200);
      const { servers } = response.json<{ servers: InstanceSummary[] }>();
      assert.deepEqual(
        servers.map(({ binded: _, registered_at: __, ...server }) => server),
        [{ id, ip: '127.0.0.1' }],
      );
      const age = servers[0]?.binded ?? -1;
      assert.ok(age >= 0 && age <= (Date.now() - registering) / 1000, `binded ${age} is the seconds since registering`);
      const registered = Date.parse(servers[0]?.registered_at ?? '');
      assert.ok(
        registered >= registering - 1 && registered <= Date.now(),
        `registered at ${servers[0]?.registered_at}`,
      );
    }
  });

  test('answers metadata, logs and stats of an instance', async () => {
    const administered = {
      version: '3.40.6',
      source: 'plugin',
      symbology_catalogue: '3.40',
      catalogue_match: 'exact',
    };
    for (const [suffix, expected] of [
      ['', { ...metadata, administered_qgis_server: administered }],
      ['/logs', results['logs']],
      ['/stats', stats],
    ] as const) {
      for (const slash of ['', '/']) {
        const response = await app.inject({ url: `/api/instances/${id}${suffix}${slash}` });
        assert.equal(response.statusCode, 200, response.body);
        assert.deepEqual(response.json(), expected);
      }
    }
  });

  test('answers 404 with an error body for an unknown instance', async () => {
    const response = await app.inject({ url: '/api/instances/deadbeef/stats' });
    assert.equal(response.statusCode, 404);
    assert.match(response.json<{ error: string }>().error, /deadbeef/);
  });

  test('answers 504 when the plugin is silent', async () => {
    const silent = await FakePlugin.connect(registry.port, hello(TOKEN));
    try {
      const silentId = await waitFor('registration', () => registry.list().find((i) => i.id !== id)?.id);
      const response = await app.inject({ url: `/api/instances/${silentId}/logs` });
      assert.equal(response.statusCode, 504);
      assert.match(response.json<{ error: string }>().error, /did not answer/);
    } finally {
      silent.close();
    }
  });
});

test('every route answers 404 when monitoring is disabled', async () => {
  const app = await instancesApp(undefined);
  try {
    for (const url of [
      '/api/instances',
      '/api/instances/',
      '/api/instances/x',
      '/api/instances/x/logs/',
      '/api/instances/x/stats',
    ]) {
      const response = await app.inject({ url });
      assert.equal(response.statusCode, 404);
      assert.deepEqual(response.json(), {
        error: 'Monitoring is not enabled: set STEWARD_QGISSERVER_MONITORING_PORT.',
        code: 'feature_disabled',
      });
    }
  } finally {
    await app.close();
  }
});
