import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { BadRequest } from '../src/errors.js';
import {
  apiStyleChange,
  assertLoads,
  assertStyleChangeClearsTiles,
  type CacheStack,
  POLYGON_TILE,
  polygonsLayer,
  startCacheStack,
} from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { filesUnder } from './support/mapproxy.js';
import { after, before, describe, it } from './support/node-test.js';
import { type LocalS3, startLocalS3 } from './support/s3.js';
import { type Call, type JobReply, POLYGONS, seededLevels, waitForJob } from './support/seeding.js';

const TIME_REFUSED = 'time dimension caching is not supported with the S3 cache: add the layer without "datetime"';

describe('tile cache on S3 (a local S3-compatible server), served by a real MapProxy', () => {
  let cs: CacheStack;
  let s3: LocalS3;
  let data: Fixtures;
  // STEWARD_MAPPROXY_CACHE_S3_DIR as an operator might write it; MapProxy's keys have no leading slash.
  const prefix = (...parts: string[]): string => ['steward/tiles', ...parts].join('/') + '/';

  before(async () => {
    data = makeFixtures();
    s3 = await startLocalS3('steward-tiles');
    // Steward reads the endpoint and credentials from its environment, like MapProxy's boto3.
    Object.assign(process.env, s3.env);
    cs = await startCacheStack({ cacheS3Bucket: s3.bucket, cacheS3Dir: '/steward/tiles/' }, s3.env);
  });
  after(async () => {
    await cs.stop();
    await s3.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('writes S3 caches under the configured directory with the endpoint, which MapProxy loads', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'remote', author: 'test' });
    await assertLoads(cs.configFile('remote'));
    assert.equal((await cs.stack.call('POST', '/api/projects/remote/layers', polygonsLayer(data))).status, 201);
    await assertLoads(cs.configFile('remote'));
    const text = readFileSync(cs.configFile('remote'), 'utf8');
    for (const expected of [
      'type: "s3"',
      'directory: "/steward/tiles/remote/polygons"',
      `bucket_name: "${s3.bucket}"`,
      `endpoint_url: "${s3.endpoint}"`,
    ]) {
      assert.ok(text.includes(expected), `${expected} in\n${text}`);
    }
    assert.deepEqual((await cs.stack.call('GET', '/api/projects/remote/cache')).body, { valid: true, storage: 's3' });
  });

  it('stores tiles under the prefix; a style change deletes them and the next tile has the new colour', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'painted', author: 'test' });
    await cs.stack.call('POST', '/api/projects/painted/layers', polygonsLayer(data));
    const stored = async (): Promise<number> => (await s3.keys(prefix('painted', 'polygons'))).length;
    await assertStyleChangeClearsTiles(cs, 'painted', 'polygons', stored, apiStyleChange(cs, 'painted', 'polygons'));
    const keys = await s3.keys(prefix('painted', 'polygons'));
    assert.ok(
      keys.every((key) => /^steward\/tiles\/painted\/polygons\/\d+\/\d+\/\d+\.png$/.test(key)),
      keys.join('\n'),
    );
    assert.deepEqual(filesUnder(join(cs.configDir, 'cache_data'), '.png'), [], 'no tile was written to disk');
  });

  it("deletes a layer's objects with the layer, and all of them on reset and with the project", async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'cleanup', author: 'test' });
    await cs.stack.call('POST', '/api/projects/cleanup/layers', polygonsLayer(data));
    await cs.stack.call('POST', '/api/projects/cleanup/layers', {
      type: 'raster',
      name: 'rgb',
      datasource: data.rgbTiff,
    });
    await cs.tile('cleanup', 'polygons', POLYGON_TILE);
    assert.deepEqual((await cs.tile('cleanup', 'rgb', POLYGON_TILE)).pixel(128, 128), [200, 40, 90, 255]);
    assert.ok((await s3.keys(prefix('cleanup', 'rgb'))).length > 0);

    assert.equal((await cs.stack.call('DELETE', '/api/projects/cleanup/layers/rgb')).status, 200);
    await assertLoads(cs.configFile('cleanup'));
    assert.deepEqual(await s3.keys(prefix('cleanup', 'rgb')), []);
    assert.ok((await s3.keys(prefix('cleanup', 'polygons'))).length > 0, 'the other layer keeps its tiles');

    assert.deepEqual(await cs.stack.call('POST', '/api/projects/cleanup/cache/reset'), { status: 200, body: true });
    await assertLoads(cs.configFile('cleanup'));
    assert.deepEqual(await s3.keys(prefix('cleanup')), [], 'reset deleted every tile of the project');

    await cs.tile('cleanup', 'polygons', POLYGON_TILE);
    assert.ok((await s3.keys(prefix('cleanup'))).length > 0);
    assert.equal((await cs.stack.call('DELETE', '/api/projects/cleanup')).status, 200);
    assert.deepEqual(await s3.keys(prefix('cleanup')), [], 'the project took its tiles with it');
  });

  it('refuses time dimensions, which MapProxy cannot cache on S3', () => {
    assert.doesNotThrow(() => cs.cache.service.checkTimeDimension(false));
    assert.throws(
      () => cs.cache.service.checkTimeDimension(true),
      (error: unknown) => error instanceof BadRequest && error.status === 400 && error.message === TIME_REFUSED,
    );
  });

  it('answers 400 to a raster layer with datetime and leaves the project, its configuration and its tiles as they were', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'timeless', author: 'test' });
    await cs.stack.call('POST', '/api/projects/timeless/layers', polygonsLayer(data));
    await cs.tile('timeless', 'polygons', POLYGON_TILE);
    const project = readFileSync(cs.qgsFile('timeless'));
    const config = readFileSync(cs.configFile('timeless'));
    const tiles = await s3.keys(prefix('timeless'));

    const undated = { type: 'raster', name: 'rgb', datasource: data.rgbTiff };
    const dated = { ...undated, datetime: '2024-05-01T00:00:00Z' };
    assert.deepEqual(await cs.stack.call('POST', '/api/projects/timeless/layers', dated), {
      status: 400,
      body: { error: TIME_REFUSED, code: 'bad_request' },
    });
    assert.ok(readFileSync(cs.qgsFile('timeless')).equals(project), 'the project file is byte-identical');
    assert.ok(readFileSync(cs.configFile('timeless')).equals(config), 'and so is the cache configuration');
    assert.deepEqual((await cs.stack.call('GET', '/api/projects/timeless/layers')).body, ['polygons']);
    assert.deepEqual(await s3.keys(prefix('timeless')), tiles);

    assert.equal(
      (await cs.stack.call('POST', '/api/projects/timeless/layers', undated)).status,
      201,
      'the layer itself is welcome',
    );
    await assertLoads(cs.configFile('timeless'));
  });

  it('seeds exactly the metatiles over the layer extent into the bucket, measured by their bytes; truncation removes the selected levels', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'warm', author: 'test' });
    await cs.stack.call('POST', '/api/projects/warm/layers', polygonsLayer(data));
    const call: Call = (method, path, body) => cs.stack.call(method, path, body);
    const runJob = async (kind: string, body: unknown): Promise<void> => {
      const reply = await call('POST', `/api/projects/warm/cache/${kind}`, body);
      assert.equal(reply.status, 202, JSON.stringify(reply.body));
      const job = await waitForJob(call, (reply.body as JobReply).id);
      assert.equal(job.state, 'succeeded', job.error ?? '');
    };
    const tiles = async (): Promise<string[]> =>
      (await s3.keys(prefix('warm', 'polygons')))
        .map((key) => key.slice(prefix('warm', 'polygons').length).replace(/\.png$/, ''))
        .sort();
    await runJob('seed', { min_zoom: 0, max_zoom: 5 });
    assert.deepEqual(await tiles(), seededLevels(POLYGONS, 0, 5));
    const usage = (await call('GET', '/api/projects/warm/cache/usage')).body;
    const stored = { tiles: seededLevels(POLYGONS, 0, 5).length, bytes: await s3.bytes(prefix('warm', 'polygons')) };
    assert.ok(stored.bytes > 0);
    assert.deepEqual(usage, { storage: 's3', layers: [{ name: 'polygons', ...stored }], total: stored });
    await runJob('truncate', { min_zoom: 4, max_zoom: 5 });
    assert.deepEqual(await tiles(), seededLevels(POLYGONS, 0, 3));
  });
});
