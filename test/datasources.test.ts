/**
 * The datasource browser against real GDAL, PostGIS and object storage: what it lists is what GDAL
 * opens, each layer's datasource adds the layer as given, and nothing outside the data folders is
 * listed or reachable.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { type CatalogLayer } from '../src/gdal/catalog.js';
import { copyToObjectStorage } from '../src/gdal/object-storage.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type S3Process, startS3Process } from './support/s3-process.js';
import { type Stack, startStack } from './support/stack.js';

type Layer = CatalogLayer;
interface Folder {
  path: string;
  parent?: string;
  folders: Array<{ name: string; path: string }>;
  datasets: Array<{ name: string; path: string; layers: Layer[] }>;
  truncated: boolean;
}

const BUCKET = 'imagery';

describe('datasource browser', () => {
  let fixtures: Fixtures;
  let outside: string;
  let stack: Stack;
  let s3: S3Process;
  let database: TestDatabase;

  const browse = async (path: string) =>
    stack.call('GET', `/api/datasources/files?path=${encodeURIComponent(path)}`) as Promise<{
      status: number;
      body: Folder & { error?: string };
    }>;

  before(async () => {
    fixtures = makeFixtures();
    mkdirSync(join(fixtures.dir, 'nested'));
    copyFileSync(fixtures.rgbTiff, join(fixtures.dir, 'nested', 'copy.tif'));
    writeFileSync(join(fixtures.dir, 'notes.txt'), 'not data\n');
    outside = join(tmpdir(), `steward-outside-${process.pid}`);
    mkdirSync(outside, { recursive: true });
    copyFileSync(fixtures.rgbTiff, join(outside, 'secret.tif'));
    symlinkSync(outside, join(fixtures.dir, 'escape'));
    [s3, database] = await Promise.all([startS3Process(BUCKET), startTestDatabase()]);
    Object.assign(process.env, s3.env);
    stack = await startStack({ dataRoots: [fixtures.dir] });
    copyToObjectStorage(fixtures.rgbTiff, `/vsis3/${BUCKET}/scenes/rgb.tif`);
    await database.sql('CREATE TABLE public.parcels (id serial PRIMARY KEY, geom geometry(Polygon, 2154))');
    await database.sql('CREATE SCHEMA survey');
    await database.sql('CREATE TABLE survey.wells (id serial PRIMARY KEY, location geometry(Point, 4326))');
    await database.sql('CREATE TABLE public.notes (id serial PRIMARY KEY, body text)');
    await database.sql(`GRANT USAGE ON SCHEMA survey TO ${database.user}`);
    await database.sql(`GRANT SELECT ON public.parcels, survey.wells, public.notes TO ${database.user}`);
  });

  after(async () => {
    await stack?.stop();
    await Promise.all([s3?.stop(), database?.stop()]);
    rmSync(fixtures.dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  test('a data folder: its sub-folders, and every layer GDAL opens with what GDAL reports', async () => {
    const { status, body } = await browse(fixtures.dir);
    assert.equal(status, 200);
    assert.equal(body.parent, undefined, 'the root has no parent inside the roots');
    assert.deepEqual(
      body.folders,
      [{ name: 'nested', path: join(fixtures.dir, 'nested') }],
      'the link out is left out',
    );
    const names = body.datasets.map((dataset) => dataset.name);
    assert.deepEqual(
      names,
      ['elevation.tif', 'rgb.tif', 'roads.shp', 'vectors.gpkg'],
      'sidecars and text are left out',
    );
    const layers = Object.fromEntries(
      body.datasets.flatMap((dataset) => dataset.layers.map((layer) => [layer.name, layer])),
    );
    assert.deepEqual(layers['points'], {
      type: 'vector',
      name: 'points',
      datasource: `${fixtures.geopackage}|layername=points`,
      crs: 'EPSG:4326',
      geometry: 'Point',
      features: 3,
    });
    assert.equal(layers['lines']?.geometry, 'MultiLineString');
    assert.equal(layers['polygons']?.geometry, 'MultiPolygon');
    assert.equal(layers['roads']?.datasource, `${fixtures.shapefile}|layername=roads`);
    assert.deepEqual(layers['rgb'], {
      type: 'raster',
      name: 'rgb',
      datasource: fixtures.rgbTiff,
      crs: 'EPSG:4326',
      bands: 3,
      data_type: 'Byte',
      width: 64,
      height: 64,
    });
    assert.equal(layers['elevation']?.crs, 'EPSG:3857');
    assert.equal(layers['elevation']?.data_type, 'Float32');
    assert.equal(body.truncated, false);
  });

  test('what the browser lists is added as a layer exactly as given', async () => {
    const { body } = await browse(fixtures.dir);
    await stack.call('POST', '/api/projects', { name: 'picked', author: 'test' });
    for (const layer of body.datasets.flatMap((dataset) => dataset.layers)) {
      const added = await stack.call('POST', '/api/projects/picked/layers', {
        type: layer.type,
        name: layer.name,
        datasource: layer.datasource,
      });
      assert.equal(added.status, 201, `${layer.name}: ${JSON.stringify(added.body)}`);
      const info = (await stack.call('GET', `/api/projects/picked/layers/${layer.name}`)).body as Layer & {
        valid: boolean;
      };
      assert.equal(info.valid, true, layer.name);
      assert.equal(info.crs, layer.crs, `${layer.name}: ${JSON.stringify(info)}`);
    }
  });

  test('a sub-folder has its parent; nothing outside the roots is listed', async () => {
    const nested = await browse(join(fixtures.dir, 'nested'));
    assert.equal(nested.body.parent, fixtures.dir);
    assert.deepEqual(
      nested.body.datasets.map((dataset) => dataset.name),
      ['copy.tif'],
    );

    const refusedLayer = await stack.call('POST', '/api/projects/picked/layers', {
      type: 'raster',
      name: 'secret',
      datasource: join(outside, 'secret.tif'),
    });
    assert.equal(refusedLayer.status, 403);
    for (const path of [
      outside,
      join(fixtures.dir, 'escape'),
      join(fixtures.dir, '..'),
      '/',
      '/vsicurl/http://127.0.0.1/',
    ]) {
      const refused = await browse(path);
      assert.equal(refused.status, 403, path);
      assert.ok(refused.body.error, path);
    }
    assert.equal((await browse('relative/folder')).status, 400);
    assert.equal((await browse(join(fixtures.dir, 'missing'))).status, 404);
  });

  test('object storage through /vsis3/: buckets, prefixes and the rasters in them', async () => {
    const buckets = await browse('/vsis3/');
    assert.equal(buckets.status, 200, JSON.stringify(buckets.body));
    assert.ok(buckets.body.folders.some((folder) => folder.name === BUCKET));
    const bucket = await browse(`/vsis3/${BUCKET}`);
    assert.deepEqual(bucket.body.folders, [{ name: 'scenes', path: `/vsis3/${BUCKET}/scenes` }]);
    const scenes = await browse(`/vsis3/${BUCKET}/scenes/`);
    assert.equal(scenes.body.parent, `/vsis3/${BUCKET}`);
    assert.deepEqual(scenes.body.datasets[0]?.layers[0], {
      type: 'raster',
      name: 'rgb',
      datasource: `/vsis3/${BUCKET}/scenes/rgb.tif`,
      crs: 'EPSG:4326',
      bands: 3,
      data_type: 'Byte',
      width: 64,
      height: 64,
    });
    assert.equal((await browse(`/vsis3/${BUCKET}/../etc`)).status, 400);
  });

  test('the tables of a PostgreSQL service, added as layers as given', async () => {
    const { status, body } = await stack.call('GET', `/api/datasources/postgres?service=${database.service}`);
    assert.equal(status, 200, JSON.stringify(body));
    const layers = (body as { layers: Layer[] }).layers.sort((a, b) => a.name.localeCompare(b.name));
    assert.deepEqual(
      layers.map(({ name, crs, geometry }) => ({ name, crs, geometry })),
      [
        { name: 'parcels', crs: 'EPSG:2154', geometry: 'Polygon' },
        { name: 'wells', crs: 'EPSG:4326', geometry: 'Point' },
      ],
      'tables without geometry are left out',
    );
    assert.equal(layers[1]?.datasource, `service='${database.service}' table="survey"."wells" (location)`);
    for (const layer of layers) {
      const added = await stack.call('POST', '/api/projects/picked/layers', {
        type: 'vector',
        name: `db_${layer.name}`,
        datasource: layer.datasource,
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
    }
    const unknown = await stack.call('GET', '/api/datasources/postgres?service=no_such_service');
    assert.equal(unknown.status, 422);
  });

  test('without STEWARD_DATA_ROOTS, folders are not browsed; object storage still is', async () => {
    const open = await startServer(
      loadConfig({
        STEWARD_QGISSERVER_URL: stack.qgis.url,
        STEWARD_QGISSERVER_PROJECTS_DIR: stack.projectsDir,
        STEWARD_LOGLEVEL: 'ERROR',
        STEWARD_LISTEN: '127.0.0.1:0',
      }),
    );
    try {
      const refused = await apiCall(open.url, 'GET', `/api/datasources/files?path=${encodeURIComponent(fixtures.dir)}`);
      assert.equal(refused.status, 404);
      assert.match((refused.body as { error: string }).error, /STEWARD_DATA_ROOTS/);
      const bucket = await apiCall(open.url, 'GET', `/api/datasources/files?path=/vsis3/${BUCKET}`);
      assert.equal(bucket.status, 200);
    } finally {
      await open.close();
    }
  });
});
