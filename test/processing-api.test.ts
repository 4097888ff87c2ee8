import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { copyToObjectStorage } from '../src/gdal/object-storage.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { type S3Process, startS3Process } from './support/s3-process.js';
import { type Stack, startStack } from './support/stack.js';

describe('processing and overviews through the API', () => {
  let stack: Stack;
  let data: Fixtures;
  // In a child process: GDAL's uploads block this process's event loop until they complete.
  let s3: S3Process;

  before(async () => {
    data = makeFixtures();
    s3 = await startS3Process('rasters');
    Object.assign(process.env, s3.env);
    stack = await startStack({ dataRoots: [data.dir] });
    await stack.call('POST', '/api/projects/', { name: 'proc', author: 'test' });
    await stack.call('POST', '/api/projects/proc/layers', {
      type: 'raster',
      name: 'elevation',
      datasource: data.floatTiff,
    });
    await stack.call('POST', '/api/projects/proc/layers', {
      type: 'vector',
      name: 'points',
      datasource: `${data.geopackage}|layername=points`,
    });
  });
  after(async () => {
    await stack.stop();
    await s3.stop();
  });

  it('answers an exact histogram of a layer: every valid pixel counted once', async () => {
    const reply = await stack.call('POST', '/api/processing/raster/histogram/proc/elevation', { count: 10 });
    assert.equal(reply.status, 200);
    const band = (reply.body as Record<string, { min: number; max: number; values: number[] }>)['1'];
    assert.ok(band);
    assert.equal(band.values.length, 10);
    assert.equal(
      band.values.reduce((sum, value) => sum + value, 0),
      50 * 49,
      'the no-data row is left out',
    );
    assert.ok(Math.abs(band.min - 5) < 1e-4);
    assert.ok(Math.abs(band.max - 249.9) < 1e-4);
  });

  it('refuses a histogram of a vector layer and of an unknown layer', async () => {
    assert.equal((await stack.call('POST', '/api/processing/raster/histogram/proc/points', {})).status, 400);
    assert.equal((await stack.call('POST', '/api/processing/raster/histogram/proc/nope', {})).status, 404);
  });

  it('writes the calculator output inside the data roots, and refuses one outside', async () => {
    const output = join(data.dir, 'double.tif');
    const reply = await stack.call('POST', '/api/processing/raster/calculator/proc', {
      expression: '"elevation@1" * 2',
      output,
    });
    assert.deepEqual(reply, { status: 201, body: true });
    const dataset = gdal.open(output);
    const band = dataset.bands.get(1);
    assert.equal(dataset.bands.count(), 1);
    assert.ok(Math.abs(band.pixels.get(10, 10) - 102) < 1e-4, 'pixel (10, 10) holds 51, doubled');
    assert.equal(band.pixels.get(10, 0), band.noDataValue, 'no-data stays no-data');
    dataset.close();
    const outside = await stack.call('POST', '/api/processing/raster/calculator/proc', {
      expression: 'elevation@1',
      output: '/tmp/steward-outside.tif',
    });
    assert.equal(outside.status, 403);
    assert.ok(!existsSync('/tmp/steward-outside.tif'));
  });

  it('answers 400 with the position of a syntax error', async () => {
    const reply = await stack.call('POST', '/api/processing/raster/calculator/proc', {
      expression: '"elevation@1" * (2',
      output: join(data.dir, 'bad.tif'),
    });
    assert.equal(reply.status, 400);
    assert.match((reply.body as { error: string }).error, /\d/);
    assert.ok(!existsSync(join(data.dir, 'bad.tif')));
  });

  it('builds the overviews of an object-storage raster added with overview: true', async () => {
    const local = join(data.dir, 'large.tif');
    const size = 1024;
    const dataset = gdal.open(local, 'w', 'GTiff', size, size, 1, gdal.GDT_Byte);
    dataset.srs = gdal.SpatialReference.fromEPSG(3857);
    dataset.geoTransform = [0, 10, 0, 10240, 0, -10];
    dataset.bands.get(1).pixels.write(
      0,
      0,
      size,
      size,
      new Uint8Array(size * size).map((_, index) => index % 251),
    );
    dataset.close();
    copyToObjectStorage(local, '/vsis3/rasters/large.tif');
    const reply = await stack.call('POST', '/api/projects/proc/layers', {
      type: 'raster',
      name: 'large',
      datasource: '/vsis3/rasters/large.tif',
      overview: true,
    });
    assert.deepEqual(reply, { status: 201, body: true });
    assert.ok(gdal.fs.readDir('/vsis3/rasters').includes('large.tif.ovr'), 'the overviews are stored in the bucket');
    const remote = gdal.open('/vsis3/rasters/large.tif');
    assert.ok(remote.bands.get(1).overviews.count() > 0, 'GDAL sees the overviews');
    remote.close();
    const vectorOverview = await stack.call('POST', '/api/projects/proc/layers', {
      type: 'raster',
      name: 'local',
      datasource: data.rgbTiff,
      overview: true,
    });
    assert.equal(vectorOverview.status, 400, 'overview applies to object storage only');
  });
});
