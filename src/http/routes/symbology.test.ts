import assert from 'node:assert/strict';

import type { FastifyInstance } from 'fastify';

import { FakePlugin, hello } from '../../../test/support/monitoring.js';
import { after, before, describe, test } from '../../../test/support/node-test.js';
import { symbologyApp } from '../../../test/support/symbology-app.js';
import { waitFor } from '../../../test/support/wait.js';
import { InstanceRegistry } from '../../monitor/registry.js';
import { SYMBOLOGY_ENDPOINTS, type SymbologyCatalogue, SymbologyCatalogues } from '../../qgis/symbology/catalogue.js';
import { AdministeredQgis } from '../../services/administered-qgis.js';

describe('symbology routes', () => {
  let app: FastifyInstance;
  let catalogue: SymbologyCatalogue;

  before(async () => {
    const qgis = await AdministeredQgis.create(await SymbologyCatalogues.load(), {
      setting: '3.22.16',
      local: () => Promise.resolve(undefined),
    });
    catalogue = qgis.catalogue();
    app = await symbologyApp(qgis);
  });
  after(() => app.close());

  test('each description answers with and without a trailing slash', async () => {
    for (const endpoint of SYMBOLOGY_ENDPOINTS) {
      for (const suffix of ['', '/']) {
        const reply = await app.inject({ method: 'GET', url: `/api/symbology/${endpoint}/properties${suffix}` });
        assert.equal(reply.statusCode, 200, endpoint);
        assert.deepEqual(reply.json(), catalogue.description(endpoint));
        assert.equal(reply.headers['steward-qgis-version'], '3.22.16');
        assert.equal(reply.headers['steward-qgis-version-source'], 'setting');
        assert.equal(reply.headers['steward-symbology-catalogue'], '3.22; match=exact');
      }
    }
  });

  test('the polygon fill description is served as QGIS describes it', async () => {
    const reply = await app.inject({
      method: 'GET',
      url: '/api/symbology/vector/polygon/single_symbol/fill/properties',
    });
    const fill = reply.json<Record<string, string>>();
    assert.equal(Object.keys(fill).length, 11);
    assert.equal(fill['outline_color'], '35,35,35,255');
  });

  test('a ramp is served by name, an unknown one is 404 with an error body', async () => {
    const base = '/api/symbology/raster/singlebandpseudocolor/ramp';
    for (const suffix of ['', '/']) {
      const reply = await app.inject({ method: 'GET', url: `${base}/Viridis/properties${suffix}` });
      assert.equal(reply.statusCode, 200);
      assert.deepEqual(reply.json(), catalogue.ramp('Viridis'));
    }
    const missing = await app.inject({ method: 'GET', url: `${base}/Nope/properties` });
    assert.equal(missing.statusCode, 404);
    assert.match(missing.json<{ error: string }>().error, /Nope/);
  });

  test('a version without its own catalogue is answered by the nearest one below, and says so', async () => {
    const qgis = await AdministeredQgis.create(await SymbologyCatalogues.load(), {
      local: () => Promise.resolve('3.30.3-'),
    });
    const other = await symbologyApp(qgis);
    try {
      const reply = await other.inject({ method: 'GET', url: '/api/symbology/vector/rendering/properties' });
      assert.equal(reply.statusCode, 200);
      assert.equal(reply.headers['steward-qgis-version-source'], 'local binary');
      assert.equal(reply.headers['steward-symbology-catalogue'], '3.22; match=nearest below');
      assert.deepEqual(reply.json(), catalogue.description('vector/rendering'));
    } finally {
      await other.close();
    }
  });
});

describe('symbology routes with instances connected', () => {
  const TOKEN = 'symbology-secret';
  const plugins: FakePlugin[] = [];
  const registries: InstanceRegistry[] = [];

  after(async () => {
    for (const plugin of plugins) plugin.close();
    await Promise.all(registries.map((registry) => registry.close()));
  });

  /** A registry (with `token`, if any) and the app whose administered version it informs, no setting. */
  async function withRegistry(token?: string): Promise<{ registry: InstanceRegistry; app: FastifyInstance }> {
    const registry = new InstanceRegistry({ ...(token && { token }) });
    registries.push(registry);
    await registry.start(0, '127.0.0.1');
    const qgis = await AdministeredQgis.create(await SymbologyCatalogues.load(), {
      instances: registry,
      local: () => Promise.resolve('3.44.15'),
    });
    return { registry, app: await symbologyApp(qgis) };
  }

  async function connect(registry: InstanceRegistry, token: string, version: string): Promise<void> {
    const count = registry.list().length;
    plugins.push(await FakePlugin.connect(registry.port, hello(token, version)));
    await waitFor('the hello', () => registry.list().length > count);
  }

  async function headers(app: FastifyInstance): Promise<Record<string, unknown>> {
    const reply = await app.inject({ method: 'GET', url: '/api/symbology/vector/rendering/properties' });
    assert.equal(reply.statusCode, 200, reply.body);
    const { 'steward-qgis-version': version, 'steward-qgis-version-source': source } = reply.headers;
    return { version, source, catalogue: reply.headers['steward-symbology-catalogue'] };
  }

  test('a trusted QGIS 3.22 instance chooses the catalogue; its version goes into the headers in ASCII', async () => {
    const { registry, app } = await withRegistry(TOKEN);
    assert.deepEqual(await headers(app), {
      version: '3.44.15',
      source: 'local binary',
      catalogue: '3.44; match=exact',
    });
    await connect(registry, TOKEN, '3.22.16-Białowieża'); // as plugins before 0.2 say it
    for (const endpoint of SYMBOLOGY_ENDPOINTS) {
      const reply = await app.inject({ method: 'GET', url: `/api/symbology/${endpoint}/properties` });
      assert.equal(reply.statusCode, 200, `${endpoint}: ${reply.body}`);
    }
    assert.deepEqual(await headers(app), { version: '3.22.16', source: 'plugin', catalogue: '3.22; match=exact' });
    await app.close();
  });

  test('a forged hello does not choose the catalogue', async () => {
    const { registry, app } = await withRegistry(TOKEN);
    const localOnly = { version: '3.44.15', source: 'local binary', catalogue: '3.44; match=exact' };
    plugins.push(await FakePlugin.connect(registry.port, hello('wrong', '3.22.16')));
    await connect(registry, TOKEN, '0.1');
    await connect(registry, TOKEN, '3.40.6\r\nSet-Cookie: a=b');
    assert.equal(registry.list().length, 2, 'the wrong token is refused; the others register');
    assert.deepEqual(await headers(app), localOnly, 'neither a refused hello nor a version that is not one counts');
    await app.close();

    const untrusted = await withRegistry();
    await connect(untrusted.registry, '', '3.22.16');
    assert.deepEqual(await headers(untrusted.app), localOnly, 'without a token no instance is trusted to say it');
    await untrusted.app.close();
  });
});
