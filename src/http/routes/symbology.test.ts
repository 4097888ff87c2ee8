import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import type { FastifyInstance } from 'fastify';

import { symbologyApp } from '../../../test/support/symbology-app.js';
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
