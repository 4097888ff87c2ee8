import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { unzipSync } from 'fflate';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { readWithQgis, runPyqgisScript } from './support/pyqgis-scripts.js';
import { ows, projectProblems, publishedLayers } from './support/qgis.js';
import { type Stack, startStack } from './support/stack.js';
import { fillStyle } from './support/write-bodies.js';

const FILL = [229, 182, 54, 255];

/** The entries of the zipped project stored in a row of `<schema>.qgis_projects`. */
async function storedArchive(db: TestDatabase, schema: string, name: string): Promise<Record<string, string>> {
  const table = `${db.quote(schema)}.qgis_projects`;
  const [row] = await db.sql<{ content: Buffer }>(`SELECT content FROM ${table} WHERE name = $1`, [name]);
  assert.ok(row, `a row for ${schema}.${name}`);
  const entries = unzipSync(row.content);
  return Object.fromEntries(Object.entries(entries).map(([entry, bytes]) => [entry, new TextDecoder().decode(bytes)]));
}

/** Whether a pixel at or next to x, y is drawn (a thin line may fall on either side of a pixel edge). */
function paintedNear(image: Image, x: number, y: number): boolean {
  return [-1, 0, 1].some((dx) => [-1, 0, 1].some((dy) => image.pixel(x + dx, y + dy)[3] > 0));
}

async function rowNames(db: TestDatabase, schema: string): Promise<string[]> {
  const rows = await db.sql<{ name: string }>(`SELECT name FROM ${db.quote(schema)}.qgis_projects ORDER BY name`);
  return rows.map((row) => row.name);
}

async function makeTables(db: TestDatabase): Promise<void> {
  await db.sql(`
    CREATE SCHEMA geodata;
    CREATE TABLE geodata.parcels (id serial PRIMARY KEY, name text, geom geometry(MultiPolygon, 4326));
    INSERT INTO geodata.parcels (name, geom) VALUES ('all', ST_GeomFromText('MULTIPOLYGON(((1 44,3 44,3 46,1 46,1 44)))', 4326));
    CREATE TABLE public.roads (gid serial PRIMARY KEY, geom geometry(LineString, 4326));
    INSERT INTO public.roads (geom) VALUES (ST_GeomFromText('LINESTRING(1 44,3 46)', 4326));
    CREATE TABLE geodata.tracks (id serial PRIMARY KEY, start geometry(Point, 4326), path geometry(LineString, 3857));
    INSERT INTO geodata.tracks (start, path) VALUES (ST_GeomFromText('POINT(0 0)', 4326), ST_GeomFromText('LINESTRING(100000 5000000,300000 5200000)', 3857));
    GRANT USAGE ON SCHEMA geodata TO ${db.user};
    GRANT SELECT ON geodata.parcels, geodata.tracks, public.roads TO ${db.user};
  `);
}

describe('projects stored in PostgreSQL', () => {
  let db: TestDatabase;
  let stack: Stack;
  let data: Fixtures;
  const path = (project: string, schema: string, rest = ''): string =>
    `/api/projects/${encodeURIComponent(project)}${rest}?schema=${encodeURIComponent(schema)}`;
  const map = (project: string, schema: string): string =>
    `postgresql:?service=${db.service}&schema=${schema}&project=${project}`;
  const draw = async (project: string, schema: string, layer: string): Promise<Image> => {
    const response = await fetch(stack.api.url + path(project, schema, `/layers/${encodeURIComponent(layer)}/map`));
    assert.equal(response.status, 200, `${layer}: ${await response.clone().text()}`);
    return decodePng(Buffer.from(await response.arrayBuffer()));
  };

  before(async () => {
    db = await startTestDatabase();
    await makeTables(db);
    data = makeFixtures();
    stack = await startStack({ psqlService: db.service });
  });
  after(async () => {
    await stack?.stop();
    await db?.stop();
  });

  it('creates projects in two schemas, each listed only in its own', async () => {
    assert.deepEqual(await stack.call('POST', '/api/projects/', { name: 'alpha', author: 'Ada', schema: 'first' }), {
      status: 201,
      body: true,
    });
    assert.deepEqual(await stack.call('POST', '/api/projects/', { name: 'beta', author: 'Bob', schema: 'second' }), {
      status: 201,
      body: true,
    });
    assert.deepEqual((await stack.call('GET', '/api/projects?schema=first')).body, ['alpha']);
    assert.deepEqual((await stack.call('GET', '/api/projects?schema=second')).body, ['beta']);
    assert.deepEqual((await stack.call('GET', '/api/projects?schema=nowhere')).body, []);
    assert.deepEqual((await stack.call('GET', '/api/projects')).body, [], 'public has no qgis_projects table');
    assert.deepEqual(await rowNames(db, 'first'), ['alpha']);
    assert.deepEqual(await rowNames(db, 'second'), ['beta']);
  });

  it('stores a project as QGIS does: zipped .qgs and QGIS metadata', async () => {
    const [row] = await db.sql<{ metadata: Record<string, string> }>(
      `SELECT metadata FROM first.qgis_projects WHERE name = 'alpha'`,
    );
    assert.deepEqual(Object.keys(row?.metadata ?? {}).sort(), ['last_modified_time', 'last_modified_user']);
    assert.match(row?.metadata['last_modified_time'] ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/);
    assert.equal(row?.metadata['last_modified_user'], db.user);
    const archive = await storedArchive(db, 'first', 'alpha');
    assert.deepEqual(Object.keys(archive), ['alpha.qgs']);
    assert.match(archive['alpha.qgs'] ?? '', /^<!DOCTYPE qgis/);
    const read = readWithQgis(map('alpha', 'first'));
    assert.deepEqual([read.title, read.author], ['alpha', 'Ada'], 'QGIS itself reads it');
  });

  it('describes a project with its storage and schema, and keeps nothing of it in the projects folder', async () => {
    const info = await stack.call('GET', path('alpha', 'first'));
    assert.equal(info.status, 200);
    const body = info.body as Record<string, string>;
    assert.equal(body['storage'], 'postgresql');
    assert.equal(body['schema'], 'first');
    assert.equal(body['author'], 'Ada');
    assert.equal(body['crs'], 'EPSG:3857');
    assert.ok(!existsSync(join(stack.projectsDir, 'steward', 'first_alpha')), 'no data folder, no steward.db');
    assert.equal((await stack.call('GET', path('alpha', 'second'))).status, 404, 'not in the other schema');
  });

  it('adds a file layer and PostGIS layers, with the expanded datasource', async () => {
    const layers = [
      { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` },
      { type: 'vector', name: 'parcels', datasource: `service=${db.service} table="geodata"."parcels" (geom)` },
      { type: 'vector', name: 'roads', datasource: `service=${db.service} table="public"."roads" (geom)` },
    ];
    for (const layer of layers) {
      assert.deepEqual(
        await stack.call('POST', path('alpha', 'first', '/layers'), layer),
        { status: 201, body: true },
        layer.name,
      );
    }
    assert.deepEqual((await stack.call('GET', path('alpha', 'first', '/layers'))).body, ['points', 'parcels', 'roads']);
    assert.deepEqual((await stack.call('GET', path('alpha', 'first', '/layers/parcels'))).body, {
      name: 'parcels',
      type: 'vector',
      source: `service='${db.service}' key='id' srid=4326 type=MultiPolygon checkPrimaryKeyUnicity='1' table="geodata"."parcels" (geom)`,
      crs: 'EPSG:4326',
      bbox: '1 44, 3 46',
      bbox_wgs84: '1 44, 3 46',
      current_style: 'default',
      styles: ['default'],
      valid: true,
      geometry: 'MultiPolygon',
    });
    const roads = (await stack.call('GET', path('alpha', 'first', '/layers/roads'))).body as Record<string, unknown>;
    assert.match(String(roads['source']), /key='gid'.*table="public"."roads" \(geom\)/);
    const qgs = (await storedArchive(db, 'first', 'alpha'))['alpha.qgs'] ?? '';
    for (const name of ['points', 'parcels', 'roads']) assert.ok(qgs.includes(`<layername>${name}</layername>`), name);
  });

  it('has QGIS Server draw the file and PostGIS layers of the database project', async () => {
    assert.deepEqual(await publishedLayers(stack.qgis, map('alpha', 'first')), ['points', 'parcels', 'roads']);
    const parcels = await draw('alpha', 'first', 'parcels');
    assert.ok(parcels.paintedPixels() > 150_000, 'the parcel covers the map');
    assert.deepEqual(parcels.pixel(200, 200), FILL);
    const roads = await draw('alpha', 'first', 'roads');
    assert.ok(roads.paintedPixels() > 300 && roads.paintedPixels() < 10_000, 'one thin diagonal');
    for (const [x, y] of [
      [50, 350],
      [200, 200],
      [350, 50],
    ] as const)
      assert.ok(paintedNear(roads, x, y), `the road passes ${x},${y}`);
    assert.equal(roads.pixel(50, 50)[3], 0, 'nothing away from the road');
    const points = await draw('alpha', 'first', 'points');
    assert.ok(points.pixel(200, 200)[3] > 0, 'a point in the middle');
    const { url } = (await stack.call('GET', path('alpha', 'first', '/layers/parcels/map/url'))).body as {
      url: string;
    };
    assert.equal(new URL(url).searchParams.get('MAP'), map('alpha', 'first'));
    assert.deepEqual(projectProblems(stack.qgis), []);
    const read = readWithQgis(map('alpha', 'first'));
    assert.deepEqual(
      read.layers['parcels'],
      { valid: true, provider: 'postgres', temporal: null },
      'QGIS itself opens the PostGIS layer',
    );
  });

  it('publishes the geometry column named in the datasource of a table with two', async () => {
    await stack.call('POST', '/api/projects/', { name: 'tracks', author: 'x', schema: 'gps' });
    const layer = { type: 'vector', name: 'path', datasource: `service=${db.service} table="geodata"."tracks" (path)` };
    assert.equal((await stack.call('POST', path('tracks', 'gps', '/layers'), layer)).status, 201);
    const info = (await stack.call('GET', path('tracks', 'gps', '/layers/path'))).body as Record<string, unknown>;
    assert.deepEqual(
      [info['geometry'], info['crs'], info['bbox']],
      ['LineString', 'EPSG:3857', '100000 5000000, 300000 5200000'],
    );
    assert.match(String(info['source']), /srid=3857 type=LineString .*\(path\)$/);
    const image = await draw('tracks', 'gps', 'path');
    for (const [x, y] of [
      [50, 350],
      [200, 200],
      [350, 50],
    ] as const)
      assert.ok(paintedNear(image, x, y), `the path passes ${x},${y}`);
  });

  it("keeps a database project's styles beside it in its schema, and QGIS Server draws the current one", async () => {
    await stack.call('POST', '/api/projects/', { name: 'painted', author: 'x', schema: 'art' });
    const layer = {
      type: 'vector',
      name: 'parcels',
      datasource: `service=${db.service} table="geodata"."parcels" (geom)`,
    };
    assert.equal((await stack.call('POST', path('painted', 'art', '/layers'), layer)).status, 201);
    assert.equal(
      (await stack.call('POST', path('painted', 'art', '/styles'), fillStyle('teal', '#00BBBB'))).status,
      201,
    );
    assert.equal(
      (await stack.call('POST', path('painted', 'art', '/layers/parcels/style'), { name: 'teal', current: true }))
        .status,
      200,
    );
    const rows = await db.sql<{ project: string; name: string }>('SELECT project, name FROM art.steward_styles');
    assert.deepEqual(rows, [{ project: 'painted', name: 'teal' }]);
    assert.ok(!existsSync(join(stack.projectsDir, 'steward', 'art_painted')), 'nothing in the projects folder');
    assert.deepEqual((await stack.call('GET', path('painted', 'art', '/styles'))).body, ['teal']);
    assert.deepEqual((await draw('painted', 'art', 'parcels')).pixel(200, 200), [0, 187, 187, 255]);
  });

  it('deletes a project: its row, its styles and its data folder', async () => {
    assert.equal(
      (await stack.call('POST', path('beta', 'second', '/styles'), fillStyle('red', '#FF0000'))).status,
      201,
    );
    // A data folder as Steward kept for a database project before its styles moved into the database.
    mkdirSync(join(stack.projectsDir, 'steward', 'second_beta'), { recursive: true });
    assert.deepEqual(await stack.call('DELETE', path('beta', 'second')), { status: 200, body: true });
    assert.deepEqual(await rowNames(db, 'second'), []);
    assert.deepEqual(await db.sql('SELECT name FROM second.steward_styles'), []);
    assert.ok(!existsSync(join(stack.projectsDir, 'steward', 'second_beta')));
    assert.deepEqual((await stack.call('GET', '/api/projects?schema=second')).body, []);
    assert.equal((await stack.call('GET', path('beta', 'second'))).status, 404);
    assert.equal((await stack.call('DELETE', path('beta', 'second'))).status, 404);
    assert.deepEqual(await rowNames(db, 'first'), ['alpha'], 'the other schema is untouched');
  });

  it('removes a layer from the database project', async () => {
    assert.deepEqual(await stack.call('DELETE', path('alpha', 'first', '/layers/roads')), { status: 200, body: true });
    assert.deepEqual((await stack.call('GET', path('alpha', 'first', '/layers'))).body, ['points', 'parcels']);
    assert.ok(
      !((await storedArchive(db, 'first', 'alpha'))['alpha.qgs'] ?? '').includes('<layername>roads</layername>'),
    );
    // QGIS Server 3.22 keeps a project loaded from PostgreSQL cached until restarted, so QGIS's own reader checks the row.
    const read = readWithQgis(map('alpha', 'first'));
    assert.deepEqual(Object.keys(read.layers).sort(), ['parcels', 'points']);
  });

  it('keeps all of 10 concurrent layer additions', async () => {
    await stack.call('POST', '/api/projects/', { name: 'busy', author: 'test', schema: 'first' });
    const names = Array.from({ length: 10 }, (_, index) => `layer${index}`);
    const replies = await Promise.all(
      names.map((name) =>
        stack.call('POST', path('busy', 'first', '/layers'), {
          type: 'vector',
          name,
          datasource: `service=${db.service} table="geodata"."parcels" (geom)`,
        }),
      ),
    );
    assert.deepEqual(
      replies.map((reply) => reply.status),
      names.map(() => 201),
    );
    assert.deepEqual(new Set(await publishedLayers(stack.qgis, map('busy', 'first'))), new Set(names));
  });

  it('manages a project that PyQGIS saved to the database, which QGIS Server still draws', async () => {
    await db.sql(`CREATE SCHEMA desktop AUTHORIZATION ${db.user}`); // QGIS saves only into an existing schema
    runPyqgisScript('write_project.py', map('made_in_qgis', 'desktop'), data.geopackage, data.rgbTiff);
    // QGIS 3.22 writes the project alone; 3.40 and later add its styles database beside it.
    const written = Object.keys(await storedArchive(db, 'desktop', 'made_in_qgis'));
    const entry = written.find((name) => name.endsWith('.qgs'));
    const [before] = await db.sql<{ time: string }>(
      `SELECT metadata->>'last_modified_time' AS time FROM desktop.qgis_projects`,
    );
    assert.deepEqual((await stack.call('GET', '/api/projects?schema=desktop')).body, ['made_in_qgis']);
    const info = (await stack.call('GET', path('made_in_qgis', 'desktop'))).body as Record<string, string>;
    assert.deepEqual(
      [info['author'], info['crs'], info['storage'], info['schema']],
      ['QGIS Desktop user', 'EPSG:4326', 'postgresql', 'desktop'],
    );
    const parcels = {
      type: 'vector',
      name: 'parcels',
      datasource: `service=${db.service} table="geodata"."parcels" (geom)`,
    };
    assert.equal((await stack.call('POST', path('made_in_qgis', 'desktop', '/layers'), parcels)).status, 201);
    assert.deepEqual(await stack.call('DELETE', path('made_in_qgis', 'desktop', '/layers/lines')), {
      status: 200,
      body: true,
    });
    assert.deepEqual(
      new Set(await publishedLayers(stack.qgis, map('made_in_qgis', 'desktop'))),
      new Set(['polygons', 'rgb', 'parcels']),
    );
    assert.deepEqual((await draw('made_in_qgis', 'desktop', 'parcels')).pixel(200, 200), FILL);
    assert.deepEqual((await draw('made_in_qgis', 'desktop', 'rgb')).pixel(200, 200), [200, 40, 90, 255]);
    const archive = await storedArchive(db, 'desktop', 'made_in_qgis');
    assert.deepEqual(Object.keys(archive), written, 'the archive keeps the entries QGIS named');
    assert.ok(archive[entry ?? '']?.includes('kept'), 'elements Steward does not own are kept');
    const [after] = await db.sql<{ time: string; user: string }>(
      `SELECT metadata->>'last_modified_time' AS time, metadata->>'last_modified_user' AS user FROM desktop.qgis_projects`,
    );
    assert.ok((after?.time ?? '') > (before?.time ?? ''), 'the modification time moves on');
    const read = readWithQgis(map('made_in_qgis', 'desktop'));
    assert.deepEqual(Object.keys(read.layers).sort(), ['parcels', 'polygons', 'rgb']);
    assert.ok(Object.values(read.layers).every((layer) => layer.valid));
  });

  it('handles a schema name with quotes and a semicolon, and a project name with URI delimiters', async () => {
    await db.sql('CREATE TABLE public.canary (id int)');
    const schema = `we"ird'; DROP TABLE public.canary; --`;
    const project = 'odd & name+#1?';
    assert.equal((await stack.call('POST', '/api/projects/', { name: project, author: 'x', schema })).status, 201);
    assert.deepEqual((await stack.call('GET', `/api/projects?schema=${encodeURIComponent(schema)}`)).body, [project]);
    assert.deepEqual(await db.sql('SELECT nspname FROM pg_namespace WHERE nspname = $1', [schema]), [
      { nspname: schema },
    ]);
    assert.deepEqual(await rowNames(db, schema), [project]);
    assert.deepEqual(
      await db.sql(`SELECT count(*)::int AS n FROM public.canary`),
      [{ n: 0 }],
      'the canary table is still there',
    );
    const layer = { type: 'raster', name: 'rgb', datasource: data.rgbTiff };
    assert.equal((await stack.call('POST', path(project, schema, '/layers'), layer)).status, 201);
    assert.deepEqual(
      (await draw(project, schema, 'rgb')).pixel(200, 200),
      [200, 40, 90, 255],
      'QGIS Server found the project by its URI',
    );
    assert.equal(((await stack.call('GET', path(project, schema))).body as Record<string, string>)['schema'], schema);
    assert.deepEqual(await stack.call('DELETE', path(project, schema)), { status: 200, body: true });
    assert.deepEqual(await rowNames(db, schema), []);
  });

  it('refuses names QGIS could not address or PostgreSQL would truncate, creating nothing', async () => {
    for (const [body, status] of [
      [{ name: 'ten%', author: 'x', schema: 'third' }, 400],
      [{ name: 'p', author: 'x', schema: 'x'.repeat(64) }, 400],
      [{ name: 'p', author: 'x', schema: 'pg_mine' }, 403], // PostgreSQL's own schemas are forbidden
    ] as const) {
      const reply = await stack.call('POST', '/api/projects/', body);
      assert.equal(reply.status, status, JSON.stringify(body));
      assert.equal(typeof (reply.body as { error: unknown }).error, 'string');
    }
    assert.deepEqual(await db.sql(`SELECT nspname FROM pg_namespace WHERE nspname IN ('third', 'pg_mine')`), []);
  });

  it('refuses a project whose data folder another project owns', async () => {
    await stack.call('POST', '/api/projects/', { name: 'b_c', author: 'x', schema: 'a' });
    const reply = await stack.call('POST', '/api/projects/', { name: 'c', author: 'x', schema: 'a_b' });
    assert.equal(reply.status, 409);
    assert.match((reply.body as { error: string }).error, /data folder/);
  });

  it('answers 404 for a layer route of a project in another schema', async () => {
    assert.equal((await stack.call('GET', path('alpha', 'second', '/layers'))).status, 404);
    assert.equal(
      (await ows(stack.qgis, map('alpha', 'second'), { SERVICE: 'WMS', REQUEST: 'GetCapabilities' })).ok,
      false,
    );
  });
});

describe('a PostGIS layer in a project on the filesystem', () => {
  let db: TestDatabase;
  let stack: Stack;

  before(async () => {
    db = await startTestDatabase();
    await makeTables(db);
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
    await db?.stop();
  });

  it('is stored expanded, described and drawn by QGIS Server', async () => {
    await stack.call('POST', '/api/projects/', { name: 'local', author: 'x' });
    const layer = {
      type: 'vector',
      name: 'parcels',
      datasource: `service=${db.service} table="geodata"."parcels" (geom)`,
    };
    assert.deepEqual(await stack.call('POST', '/api/projects/local/layers', layer), { status: 201, body: true });
    const info = (await stack.call('GET', '/api/projects/local/layers/parcels')).body as Record<string, unknown>;
    assert.equal(
      info['source'],
      `service='${db.service}' key='id' srid=4326 type=MultiPolygon checkPrimaryKeyUnicity='1' table="geodata"."parcels" (geom)`,
    );
    assert.equal(info['valid'], true);
    const response = await fetch(`${stack.api.url}/api/projects/local/layers/parcels/map`);
    assert.equal(response.status, 200);
    assert.deepEqual(decodePng(Buffer.from(await response.arrayBuffer())).pixel(200, 200), FILL);
    assert.deepEqual(await publishedLayers(stack.qgis, join(stack.projectsDir, 'local', 'local.qgs')), ['parcels']);
    assert.deepEqual(projectProblems(stack.qgis), []);
  });
});
