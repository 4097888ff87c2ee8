/**
 * Import into PostGIS against real GDAL, PostgreSQL and QGIS Server: a GeoPackage made here is
 * copied into a table with its key and spatial index, appended, overwritten, cancelled midway
 * (leaving no table), refused with the right status for bad requests, imported from the command
 * line, and drawn by QGIS Server once added to a project. A Shapefile mixing polygons and
 * multipolygons becomes a MultiPolygon table; a layer's `sql=` filter is kept and honoured.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { steward } from './support/cli.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { writePoints } from './support/points.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { scratchFolder } from './support/scratch.js';
import { type Stack, startStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

/** Features of the GeoPackage most tests import, and of the one a cancel stops. */
const FEATURES = 3000;
const LARGE_FEATURES = 400_000;
const IMPORT_MS = 120_000;

interface JobAnswer {
  id: string;
  state: string;
  progress: number;
  error: string | null;
  params: Record<string, unknown>;
  result?: { rows: number; datasource?: string };
}

describe('import into PostGIS', () => {
  const scratch = scratchFolder('steward-import-');
  const uploads = join(scratch, 'uploads');
  const outside = join(scratch, 'outside');
  let database: TestDatabase;
  let stack: Stack;

  const start = (body: Record<string, unknown>) =>
    stack.call('POST', '/api/datasources/postgres/import', { service: database.service, schema: 'public', ...body });

  async function ended(id: string): Promise<JobAnswer> {
    return waitFor(
      `job ${id} to end`,
      async () => {
        const job = (await stack.call('GET', `/api/jobs/${id}`)).body as JobAnswer;
        return ['succeeded', 'failed', 'cancelled'].includes(job.state) && job;
      },
      IMPORT_MS,
      100,
    );
  }

  async function imported(body: Record<string, unknown>): Promise<JobAnswer> {
    const { status, body: job } = await start(body);
    assert.equal(status, 202, JSON.stringify(job));
    const done = await ended((job as JobAnswer).id);
    assert.equal(done.state, 'succeeded', done.error ?? '');
    return done;
  }

  const rows = async (table: string) =>
    Number((await database.sql<{ n: string }>(`SELECT count(*)::text AS n FROM public.${table}`))[0]?.n);
  const exists = async (table: string) =>
    (await database.sql<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [`public.${table}`]))[0]?.t !== null;

  /** A WMS GetMap of a layer of a project over the points' area. */
  async function drawing(project: string, layer: string): Promise<Image> {
    const query = new URLSearchParams({
      layers: layer,
      bbox: '0.5,43.5,3.5,46.5',
      crs: 'EPSG:4326',
      width: '200',
      height: '200',
    });
    const map = await fetch(`${stack.api.url}/api/projects/${project}/wms?${query}`);
    assert.equal(map.status, 200, await map.clone().text());
    return decodePng(Buffer.from(await map.arrayBuffer()));
  }

  /** Pixels of a drawing painted darker than the white of an empty map. */
  function drawnPixels(image: Image): number {
    let drawn = 0;
    for (let y = 0; y < image.height; y += 1) {
      for (let x = 0; x < image.width; x += 1) {
        const [red, green, blue, alpha] = image.pixel(x, y);
        if (alpha > 0 && red + green + blue < 3 * 250) drawn += 1;
      }
    }
    return drawn;
  }

  /** Features of a layer as QGIS Server's WFS GetFeature counts them. */
  async function servedFeatures(project: string, layer: string): Promise<number> {
    const page = await stack.call('GET', `/api/projects/${project}/layers/${layer}/features?count=1`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    return (page.body as { total: number }).total;
  }

  async function addLayer(project: string, name: string, datasource: string): Promise<void> {
    const added = await stack.call('POST', `/api/projects/${project}/layers`, { type: 'vector', name, datasource });
    assert.equal(added.status, 201, JSON.stringify(added.body));
  }

  /** Publishes the layers by WFS, whose GetFeature the features route asks. */
  async function publishByWfs(project: string, layers: string[]): Promise<void> {
    const services = await stack.call('PATCH', `/api/projects/${project}/services`, { wfs: { layers } });
    assert.equal(services.status, 200, JSON.stringify(services.body));
  }

  before(async () => {
    mkdirSync(uploads);
    mkdirSync(outside);
    writeMixedPolygons(join(uploads, 'parcels.shp'));
    writePoints(join(uploads, 'places.gpkg'), FEATURES);
    writePoints(join(uploads, 'large.gpkg'), LARGE_FEATURES);
    writePoints(join(outside, 'secret.gpkg'), 10);
    writeFileSync(join(uploads, 'notes.gpkg'), 'not a GeoPackage\n');
    database = await startTestDatabase();
    stack = await startStack({ dataRoots: [uploads], uploadRoot: uploads });
  });

  after(async () => {
    await stack?.stop();
    await database?.stop();
  });

  it('copies a GeoPackage into a table with its key, geometry type, SRID and spatial index', async () => {
    const job = await imported({ table: 'places', source: 'places.gpkg', crs: 'EPSG:3857' });
    assert.equal(job.result?.rows, FEATURES);
    assert.equal(job.result?.datasource, `service='${database.service}' table="public"."places" (geom)`);
    assert.equal(await rows('places'), FEATURES);
    const [column] = await database.sql<{ type: string; srid: number }>(
      "SELECT type, srid FROM geometry_columns WHERE f_table_name = 'places' AND f_geometry_column = 'geom'",
    );
    assert.deepEqual(column, { type: 'POINT', srid: 3857 });
    const key = await database.sql<{ column: string }>(
      `SELECT a.attname AS column FROM pg_index i
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
       WHERE i.indrelid = 'public.places'::regclass AND i.indisprimary`,
    );
    assert.deepEqual(key, [{ column: 'id' }]);
    const gist = await database.sql<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'places' AND indexdef ILIKE '%USING gist (geom)%'",
    );
    assert.equal(gist.length, 1, 'a GiST index on geom');
    const [far] = await database.sql<{ x: number }>('SELECT max(ST_X(geom)) AS x FROM public.places');
    assert.ok((far?.x ?? 0) > 300_000, 'the points are in Web Mercator metres');
  });

  it('appends rows to the table, and overwriting starts it again', async () => {
    await imported({ table: 'places', source: 'places.gpkg', crs: 'EPSG:3857', mode: 'append' });
    assert.equal(await rows('places'), 2 * FEATURES);
    const keys = await database.sql<{ n: string }>('SELECT count(DISTINCT id)::text AS n FROM public.places');
    assert.equal(Number(keys[0]?.n), 2 * FEATURES, 'appended rows get keys of their own');
    await imported({ table: 'places', source: join(uploads, 'places.gpkg'), layer: 'places', mode: 'overwrite' });
    assert.equal(await rows('places'), FEATURES);
    const [column] = await database.sql<{ srid: number }>(
      "SELECT srid FROM geometry_columns WHERE f_table_name = 'places'",
    );
    assert.equal(column?.srid, 4326, "the overwritten table has the source's CRS");
  });

  it('refuses bad requests with their status and a message, creating nothing', async () => {
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ table: 'places', source: 'places.gpkg' }, 409, /exists/],
      [{ table: 'Bad-Name', source: 'places.gpkg' }, 400, /table/],
      [{ schema: 'pg_catalog', table: 'stolen', source: 'places.gpkg' }, 403, /PostgreSQL's own/],
      [{ schema: 'nowhere', table: 'lost', source: 'places.gpkg' }, 404, /schema "nowhere"/],
      [{ service: 'no_such_service', table: 'lost', source: 'places.gpkg' }, 404, /no_such_service/],
      [{ table: 'lost', source: join(outside, 'secret.gpkg') }, 403, /data folders/],
      [{ table: 'lost', source: 'notes.gpkg' }, 422, /notes\.gpkg/],
      [{ table: 'lost', source: 'places.gpkg', layer: 'missing' }, 422, /missing/],
      [{ table: 'lost', source: 'places.gpkg', crs: 'EPSG:999999' }, 400, /crs/],
      [{ table: 'lost', source: 'places.gpkg', mode: 'append' }, 404, /does not exist/],
    ];
    for (const [body, status, message] of cases) {
      const answer = await start(body);
      assert.equal(answer.status, status, `${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`);
      assert.match((answer.body as { error: string }).error, message);
    }
    assert.equal(await exists('lost'), false);
    assert.equal(await exists('stolen'), false);
  });

  /** Starts an import of the large GeoPackage, cancels it once a fifth is copied, and waits for its session to end. */
  async function cancelMidway(body: Record<string, unknown>): Promise<void> {
    const { status, body: job } = await start({ source: 'large.gpkg', ...body });
    assert.equal(status, 202, JSON.stringify(job));
    const id = (job as JobAnswer).id;
    const running = await waitFor(
      'the import to copy a fifth',
      async () => {
        const current = (await stack.call('GET', `/api/jobs/${id}`)).body as JobAnswer;
        const copying = current.state === 'running' && current.progress >= 0.2;
        return (copying || !['queued', 'running'].includes(current.state)) && current;
      },
      IMPORT_MS,
    );
    assert.equal(running.state, 'running', 'the import is cancelled while it copies');
    const cancel = await stack.call('DELETE', `/api/jobs/${id}`);
    assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
    assert.equal((await ended(id)).state, 'cancelled');
    await waitFor('the worker session to end', async () => {
      const sessions = await database.sql(
        "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'steward-import-%'",
      );
      return sessions.length === 0;
    });
  }

  it('stops a cancelled import midway, leaving no new table and an overwritten one as it was', async () => {
    await cancelMidway({ table: 'large' });
    assert.equal(await exists('large'), false);
    await cancelMidway({ table: 'places', mode: 'overwrite', crs: 'EPSG:3857' });
    assert.equal(await rows('places'), FEATURES);
    const [column] = await database.sql<{ srid: number }>(
      "SELECT srid FROM geometry_columns WHERE f_table_name = 'places'",
    );
    assert.equal(column?.srid, 4326, 'the table is the one the cancelled overwrite would have replaced');
  });

  it('imports from the command line, following the job to its end', async () => {
    const env = { STEWARD_SERVER_URL: stack.api.url };
    const outcome = await steward(['import', database.service, 'public.places', 'places.gpkg', '--append'], env);
    assert.equal(outcome.code, 0, outcome.err);
    assert.match(outcome.out, new RegExp(`${2 * FEATURES} rows in public\\.places\\n$`));
    const refused = await steward(['import', database.service, 'public.places', 'places.gpkg'], env);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /exists/);
    const both = await steward(['import', database.service, 'places', 'places.gpkg', '--append', '--overwrite'], env);
    assert.equal(both.code, 1);
    assert.match(both.err, /not both/);
  });

  it('gives a table QGIS Server draws once added to a project', async () => {
    const job = await imported({ table: 'drawn', source: 'places.gpkg' });
    assert.equal((await stack.call('POST', '/api/projects', { name: 'imported', author: 'tests' })).status, 201);
    await addLayer('imported', 'drawn', job.result?.datasource ?? '');
    const drawn = drawnPixels(await drawing('imported', 'drawn'));
    assert.ok(drawn > 1000, `${drawn} pixels drawn`);
  });

  it('promotes a source mixing polygons and multipolygons to a MultiPolygon table, as ogr2ogr -nlt PROMOTE_TO_MULTI', async () => {
    const job = await imported({ table: 'parcels', source: 'parcels.shp' });
    assert.equal(job.result?.rows, 2);
    const [column] = await database.sql<{ type: string }>(
      "SELECT type FROM geometry_columns WHERE f_table_name = 'parcels' AND f_geometry_column = 'geom'",
    );
    assert.equal(column?.type, 'MULTIPOLYGON');
    const parts = await database.sql<{ kind: string; type: string; parts: number }>(
      'SELECT kind, ST_GeometryType(geom) AS type, ST_NumGeometries(geom) AS parts FROM public.parcels ORDER BY kind',
    );
    assert.deepEqual(parts, [
      { kind: 'multi', type: 'ST_MultiPolygon', parts: 2 },
      { kind: 'single', type: 'ST_MultiPolygon', parts: 1 },
    ]);
    assert.equal((await stack.call('POST', '/api/projects', { name: 'parcels', author: 'tests' })).status, 201);
    await addLayer('parcels', 'parcels', job.result?.datasource ?? '');
    await publishByWfs('parcels', ['parcels']);
    assert.equal(await servedFeatures('parcels', 'parcels'), 2);
    const drawn = drawnPixels(await drawing('parcels', 'parcels'));
    assert.ok(drawn > 1000, `${drawn} pixels of the parcels drawn`);
  });

  it("keeps a layer's sql= filter and honours it: QGIS Server's features, the extent, an import and a repair", async () => {
    const job = await imported({ table: 'filtered', source: 'places.gpkg' });
    const table = job.result?.datasource ?? '';
    const datasource = `${table} sql="id" <= 100`;
    assert.equal((await stack.call('POST', '/api/projects', { name: 'filtered', author: 'tests' })).status, 201);
    await addLayer('filtered', 'all', table);
    await addLayer('filtered', 'some', datasource);
    await publishByWfs('filtered', ['all', 'some']);
    const layer = (name: string) =>
      stack
        .call('GET', `/api/projects/filtered/layers/${name}`)
        .then(({ body }) => body as { source: string; bbox: string });
    const some = await layer('some');
    assert.match(some.source, /sql="id" <= 100$/);
    const top = (bbox: string): number => Number(bbox.split(/[ ,]+/)[3]);
    assert.ok(
      top(some.bbox) < top((await layer('all')).bbox),
      `the filtered extent ${some.bbox} is the kept features'`,
    );
    assert.equal(await servedFeatures('filtered', 'some'), 100);
    assert.equal(await servedFeatures('filtered', 'all'), FEATURES);
    const [few, many] = [drawnPixels(await drawing('filtered', 'some')), drawnPixels(await drawing('filtered', 'all'))];
    assert.ok(few > 0 && few < many / 5, `the filtered layer draws ${few} pixels, the table ${many}`);

    const copy = await imported({ table: 'kept', source: datasource });
    assert.equal(copy.result?.rows, 100);
    assert.equal(await rows('kept'), 100);
    const [largest] = await database.sql<{ id: number }>('SELECT max(id) AS id FROM public.kept');
    assert.ok((largest?.id ?? Infinity) <= 100);

    const check = await stack.call('GET', '/api/projects/filtered/check');
    assert.equal((check.body as { status: string }).status, 'ok', JSON.stringify(check.body));
    const refused = await stack.call('POST', '/api/projects/filtered/layers', {
      type: 'vector',
      name: 'wrong',
      datasource: `${table} sql="nothere" = 1`,
    });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.match((refused.body as { error: string }).error, /nothere/);

    const repaired = await stack.call('PATCH', '/api/projects/filtered/layers/some', {
      datasource: copy.result?.datasource,
    });
    assert.equal(repaired.status, 200, JSON.stringify(repaired.body));
    assert.match((await layer('some')).source, /table="public"\."kept" .*sql="id" <= 100$/);
    assert.equal(await servedFeatures('filtered', 'some'), 100);
  });
});

/**
 * A Shapefile of polygons (its declared type) holding a polygon and a multipolygon of two parts,
 * as Desktop writes one whose features were split.
 */
function writeMixedPolygons(path: string): void {
  const dataset = gdal.open(path, 'w', 'ESRI Shapefile');
  try {
    const layer = dataset.layers.create('parcels', gdal.SpatialReference.fromEPSG(4326), gdal.wkbPolygon);
    layer.fields.add(new gdal.FieldDefn('kind', gdal.OFTString));
    const square = (x: number, y: number): string =>
      `((${x} ${y}, ${x + 0.8} ${y}, ${x + 0.8} ${y + 0.8}, ${x} ${y + 0.8}, ${x} ${y}))`;
    for (const [kind, wkt] of [
      ['single', `POLYGON ${square(1, 44)}`],
      ['multi', `MULTIPOLYGON (${square(2, 45)}, ${square(1, 45.1)})`],
    ] as const) {
      const feature = new gdal.Feature(layer);
      feature.fields.set('kind', kind);
      feature.setGeometry(gdal.Geometry.fromWKT(wkt));
      layer.features.add(feature);
    }
  } finally {
    dataset.close();
  }
}
