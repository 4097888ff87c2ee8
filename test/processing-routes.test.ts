import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';

import { configureGdalMemory } from '../src/gdal/gdal-memory.js';
import { computeHistogram } from '../src/gdal/histogram.js';
import { buildApp } from '../src/http/app.js';
import { processingRoutes } from '../src/http/routes/processing.js';
import { ProcessingService } from '../src/services/processing.js';
import { after, before, describe, test } from './support/node-test.js';
import { bareApp, MemoryLayers } from './support/processing-app.js';
import { scratchFolder, writeRaster } from './support/rasters.js';

configureGdalMemory();

describe('processing routes', () => {
  let folder: Awaited<ReturnType<typeof scratchFolder>>;
  let app: FastifyInstance;
  let dem = '';

  const post = (url: string, payload: unknown) => app.inject({ method: 'POST', url, payload: payload as object });

  before(async () => {
    folder = await scratchFolder('steward-routes-');
    dem = writeRaster(join(folder.dir, 'dem.tif'), {
      type: 'Int16',
      width: 300,
      height: 280,
      noData: -1,
      value: (x, y) => (x * y) % 700,
    });
    const rgb = writeRaster(join(folder.dir, 'rgb.tif'), {
      type: 'Byte',
      width: 300,
      height: 280,
      bands: 3,
      value: (x, y, b) => (x + y * b) % 256,
    });
    const layers = new MemoryLayers({
      'public/site': [
        { name: 'dem', type: 'raster', source: dem },
        { name: 'photo', type: 'raster', source: rgb },
        { name: 'roads', type: 'vector', source: join(folder.dir, 'roads.gpkg') },
      ],
      'other/site': [{ name: 'elevation', type: 'raster', source: dem }],
    });
    app = await buildApp(pino({ level: 'silent' }), [processingRoutes(new ProcessingService(layers))], {
      apiToken: undefined,
    });
  });
  after(async () => {
    await app.close();
    await folder.remove();
  });

  test('answers the histogram of every band, with and without a trailing slash', async () => {
    for (const url of ['/api/processing/raster/histogram/site/photo', '/api/processing/raster/histogram/site/photo/']) {
      const response = await post(url, { min: 0, count: 16 });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), await computeHistogram(join(folder.dir, 'rgb.tif'), { min: 0, count: 16 }));
      assert.deepEqual(Object.keys(response.json()), ['1', '2', '3']);
    }
  });

  test('defaults to 1000 bins over the valid range, and honours max and the schema', async () => {
    const response = await post('/api/processing/raster/histogram/site/elevation?schema=other', { max: 699 });
    assert.equal(response.statusCode, 200, response.body);
    const band = response.json<Record<string, { min: number; max: number; values: number[] }>>()['1'];
    assert.equal(band?.values.length, 1000);
    assert.equal(band?.min, 0);
    assert.equal(band?.max, 699);
  });

  test('takes a POST without a body as a request for the defaults', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/processing/raster/histogram/site/dem' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), await computeHistogram(dem));
  });

  test('refuses bad histogram bodies with 400', async () => {
    for (const body of [
      { count: 0 },
      { count: 100001 },
      { count: 2.5 },
      { min: 'low' },
      { bins: 3 },
      { min: 5, max: 1 },
    ]) {
      const response = await post('/api/processing/raster/histogram/site/dem', body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(typeof response.json<{ error: string }>().error, 'string');
    }
  });

  test('answers 400 for a vector layer and 404 for an unknown layer or project', async () => {
    assert.equal((await post('/api/processing/raster/histogram/site/roads', {})).statusCode, 400);
    assert.equal((await post('/api/processing/raster/histogram/site/nothing', {})).statusCode, 404);
    assert.equal((await post('/api/processing/raster/histogram/nowhere/dem', {})).statusCode, 404);
    assert.equal((await post('/api/processing/raster/histogram/site/dem?schema=other', {})).statusCode, 404);
  });

  test('creates the calculator output and answers 201 true, with and without a trailing slash', async () => {
    for (const [index, url] of [
      '/api/processing/raster/calculator/site',
      '/api/processing/raster/calculator/site/',
    ].entries()) {
      const output = join(folder.dir, `slope-${index}.tif`);
      const response = await post(url, { expression: '"dem@1" * 2 + photo@3', output });
      assert.equal(response.statusCode, 201, response.body);
      assert.equal(response.json(), true);
      assert.ok((await stat(output)).size > 0);
    }
  });

  test('answers 400 naming the position of a bad expression, an unknown layer or a missing band', async () => {
    const output = join(folder.dir, 'never.tif');
    const cases: Array<[string, RegExp]> = [
      ['dem@1 +* 2', /character 8/],
      ['(dem@1', /character 7/],
      ['dem@1 + lake@1', /"lake"/],
      ['dem@1 -photo@1', /part of the name/],
      ['photo@4', /character 1: layer "photo" has 3 bands/],
      ['roads@1 * 2', /vector layer/],
    ];
    for (const [expression, message] of cases) {
      const response = await post('/api/processing/raster/calculator/site', { expression, output });
      assert.equal(response.statusCode, 400, expression);
      assert.match(response.json<{ error: string }>().error, message);
    }
    await assert.rejects(stat(output));
  });

  test('answers 400 for a bad body, 404 for an unknown project and 422 for an output it cannot write', async () => {
    assert.equal((await post('/api/processing/raster/calculator/site', { expression: 'dem@1' })).statusCode, 400);
    assert.equal(
      (await post('/api/processing/raster/calculator/site', { expression: '', output: '/tmp/x.tif' })).statusCode,
      400,
    );
    assert.equal(
      (
        await post('/api/processing/raster/calculator/nowhere', {
          expression: 'dem@1',
          output: join(folder.dir, 'x.tif'),
        })
      ).statusCode,
      404,
    );
    const unwritable = await post('/api/processing/raster/calculator/site', {
      expression: 'dem@1',
      output: join(folder.dir, 'no/such/folder/x.tif'),
    });
    assert.equal(unwritable.statusCode, 422);
    assert.match(unwritable.json<{ error: string }>().error, /does not exist/);
  });

  test('answers 415 to a body that is not JSON', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/processing/raster/histogram/site/dem',
      payload: 'count=3',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(response.statusCode, 415);
  });

  test('registers both spellings itself in an app that does not ignore trailing slashes', async () => {
    const bare = await bareApp(
      processingRoutes(
        new ProcessingService(new MemoryLayers({ 'public/p': [{ name: 'dem', type: 'raster', source: dem }] })),
      ),
    );
    for (const url of ['/api/processing/raster/histogram/p/dem', '/api/processing/raster/histogram/p/dem/']) {
      assert.equal((await bare.inject({ method: 'POST', url, payload: { count: 3 } })).statusCode, 200);
    }
    await bare.close();
  });
});
