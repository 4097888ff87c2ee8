/**
 * Layers of every kind of provider as QGIS reads them, with PyQGIS as the oracle: a project QGIS
 * wrote with an XYZ basemap, a WMS layer and a memory layer checks ok and Steward's maps of them are
 * drawn; a tile service gone is reported; PostgreSQL datasources are parsed with QGIS's grammar,
 * written only when QGIS reads them as valid, and their passwords never shown.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, pixelsOf } from './support/png.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type Check } from './support/project-check.js';
import { runPyqgisAsync, TEST_QGIS } from './support/qgis-runtime.js';
import { type Stack, startStack } from './support/stack.js';
import { startWebServices, TILE_COLOUR, type WebServices, WMS_COLOUR } from './support/web-services.js';

const PASSWORD = 'TopSecret42';

describe('layer providers', () => {
  let data: Fixtures;
  let web: WebServices;
  let db: TestDatabase;
  let stack: Stack;

  const qgsFile = (): string => join(stack.projectsDir, 'basemaps', 'basemaps.qgs');

  async function check(project: string): Promise<Check> {
    const { status, body } = await stack.call('GET', `/api/projects/${project}/check`);
    assert.equal(status, 200, JSON.stringify(body));
    return body as Check;
  }

  async function layerMap(project: string, layer: string): Promise<Buffer> {
    const response = await fetch(`${stack.api.url}/api/projects/${project}/layers/${layer}/map`);
    assert.equal(response.status, 200, `${layer}: ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  }

  /** What QGIS reads of a PostgreSQL layer: whether it is valid, and how many features it reads. */
  async function qgisReads(datasource: string): Promise<{ valid: boolean; features: number }> {
    const printed = await runPyqgisAsync(TEST_QGIS, 'layer_validity.py', 'postgres', datasource);
    return JSON.parse(printed) as { valid: boolean; features: number };
  }

  before(async () => {
    data = makeFixtures();
    [web, db] = await Promise.all([startWebServices(), startTestDatabase()]);
    await db.sql(`
      CREATE TABLE public.wells (id serial PRIMARY KEY, depth integer, geom geometry(Point, 4326));
      INSERT INTO public.wells (depth, geom) VALUES (12, ST_SetSRID(ST_MakePoint(2, 45), 4326));
      GRANT SELECT ON public.wells TO ${db.user};
    `);
    stack = await startStack();
    assert.equal((await stack.call('POST', '/api/projects', { name: 'basemaps', author: 'p' })).status, 201);
    const written = await runPyqgisAsync(
      TEST_QGIS,
      'write_provider_project.py',
      qgsFile(),
      data.geopackage,
      web.tileUrl,
      web.wmsUrl,
    );
    assert.deepEqual(JSON.parse(written), { basemap: true, world: true, sketch: true, polygons: true });
    assert.equal((await stack.call('POST', '/api/projects', { name: 'tables', author: 'p' })).status, 201);
  });

  after(async () => {
    await stack?.stop();
    await Promise.all([web?.stop(), db?.stop()]);
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('checks an XYZ basemap, a WMS layer and a memory layer ok, as QGIS reads them', async () => {
    const result = await check('basemaps');
    assert.deepEqual(
      result.layers.map(({ name, status, findings }) => [name, status, findings]).sort(),
      ['basemap', 'polygons', 'sketch', 'world'].map((name) => [name, 'ok', []]),
    );
    assert.equal(result.status, 'ok');
    for (const name of ['basemap', 'world', 'sketch']) {
      const { status, body } = await stack.call('GET', `/api/projects/basemaps/layers/${name}`);
      assert.equal(status, 200);
      assert.equal((body as { valid: boolean }).valid, true, name);
    }
  });

  it("draws Steward's maps of the web layers from their services", async () => {
    assert.ok(pixelsOf(decodePng(await layerMap('basemaps', 'basemap')), TILE_COLOUR) > 1000, 'tiles drawn');
    assert.ok(pixelsOf(decodePng(await layerMap('basemaps', 'world')), WMS_COLOUR) > 1000, 'WMS map drawn');
    await layerMap('basemaps', 'sketch');
    assert.ok(web.requests.some((path) => path.startsWith('/tiles/')));
  });

  it('reports a basemap whose tile service no longer serves it, until it does again', async () => {
    const original = readFileSync(qgsFile(), 'utf8');
    writeFileSync(qgsFile(), original.replaceAll('/tiles/%7Bz%7D', '/gone/%7Bz%7D'));
    try {
      const basemap = (await check('basemaps')).layers.find((layer) => layer.name === 'basemap');
      assert.equal(basemap?.status, 'broken');
      assert.match(basemap?.findings[0]?.message ?? '', /answered 404/);
    } finally {
      writeFileSync(qgsFile(), original);
    }
  });

  it('writes a PostgreSQL table as QGIS writes it, which QGIS reads as valid', async () => {
    const added = await stack.call('POST', '/api/projects/tables/layers', {
      type: 'vector',
      name: 'deep',
      datasource: `service='${db.service}' table="public"."wells" (geom) sql="depth" > 10`,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const stored = readFileSync(join(stack.projectsDir, 'tables', 'tables.qgs'), 'utf8');
    const datasource = /<datasource>([^<]*wells[^<]*)<\/datasource>/.exec(stored)?.[1]?.replaceAll('&quot;', '"');
    assert.equal(
      datasource?.replaceAll('&gt;', '>'),
      `service='${db.service}' key='id' srid=4326 type=Point checkPrimaryKeyUnicity='1' table="public"."wells" (geom) sql="depth" > 10`,
    );
    assert.deepEqual(await qgisReads(datasource?.replaceAll('&gt;', '>') ?? ''), { valid: true, features: 1 });
  });

  it('refuses keys QGIS does not read, repeated keys, and a key or filter on no column', async () => {
    const before = readFileSync(join(stack.projectsDir, 'tables', 'tables.qgs'), 'utf8');
    for (const datasource of [
      `service='${db.service}' colour=red table="public"."wells" (geom)`,
      `service='${db.service}' service='${db.service}' table="public"."wells" (geom)`,
      `service='${db.service}' table="public"."wells" (geom) sql=nonexistent_column = 1`,
      `service='${db.service}' key='nope' table="public"."wells" (geom)`,
    ]) {
      const reply = await stack.call('POST', '/api/projects/tables/layers', { type: 'vector', name: 'x', datasource });
      assert.equal(reply.status, 422, `${datasource}: ${JSON.stringify(reply.body)}`);
    }
    assert.deepEqual(
      await qgisReads(`service='${db.service}' table="public"."wells" (geom) sql=nonexistent_column = 1`),
      { valid: true, features: 0 },
      'QGIS reads no feature of the table through a filter on no column (the database refuses its query)',
    );
    assert.equal(readFileSync(join(stack.projectsDir, 'tables', 'tables.qgs'), 'utf8'), before);
  });

  it('never shows a password: not in the layer, its check, nor an error', async () => {
    const datasource = `service='${db.service}' password='${PASSWORD}' table="public"."wells" (geom)`;
    const added = await stack.call('POST', '/api/projects/tables/layers', {
      type: 'vector',
      name: 'secret',
      datasource,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const layer = await stack.call('GET', '/api/projects/tables/layers/secret');
    assert.match((layer.body as { source: string }).source, /password='\*\*\*'/);
    const refused = await stack.call('POST', '/api/projects/tables/layers', {
      type: 'vector',
      name: 'y',
      datasource: `service='${db.service}' password='${PASSWORD}' table="public"."nowhere" (geom)`,
    });
    assert.equal(refused.status, 422);
    await db.sql('ALTER TABLE public.wells RENAME TO wells_moved');
    try {
      const secret = (await check('tables')).layers.find((each) => each.name === 'secret');
      assert.equal(secret?.status, 'broken');
      assert.match(secret?.findings[0]?.message ?? '', /password='\*\*\*'/);
      const everything = JSON.stringify([layer.body, refused.body, secret]);
      assert.ok(!everything.includes(PASSWORD), everything);
    } finally {
      await db.sql('ALTER TABLE public.wells_moved RENAME TO wells');
    }
  });
});
