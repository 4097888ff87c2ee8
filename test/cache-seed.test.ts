import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import gdal from 'gdal-async';

import { startApiProcess } from './support/api-process.js';
import { type CacheStack, POLYGON_TILE, polygonsLayer, startCacheStack } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { filesUnder } from './support/mapproxy.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { INFO_LOG_LEVEL } from './support/qgis-runtime.js';
import { type Call, type JobReply, POLYGONS, seededLevels, waitForJob } from './support/seeding.js';
import { fillStyle } from './support/write-bodies.js';

describe('seeding and truncating the tile cache on disk with mapproxy-seed', () => {
  let cs: CacheStack;
  let data: Fixtures;
  /** The cached tiles of a layer as `z/x/y`. */
  const cached = (project: string, layer: string): string[] => {
    const dir = join(cs.configDir, 'cache_data', project, layer);
    return filesUnder(dir, '.png')
      .map((file) => relative(dir, file).replace(/\.png$/, ''))
      .sort();
  };

  before(async () => {
    [data, cs] = [makeFixtures(), await startCacheStack({}, {}, { env: INFO_LOG_LEVEL })];
  });
  after(async () => {
    await cs.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  const levels = (from: number, to: number): string[] => seededLevels(POLYGONS, from, to);
  const call: Call = (method, path, body) => cs.stack.call(method, path, body);
  const metrics = async (): Promise<string> => (await fetch(`${cs.stack.api.url}/metrics`)).text();
  const getMaps = (): number => cs.stack.qgis.log.filter((line) => line.includes('REQUEST:GetMap')).length;
  const submit = async (project: string, kind: string, body: unknown): Promise<JobReply> => {
    const reply = await fetch(`${cs.stack.api.url}/api/projects/${project}/cache/${kind}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const job = (await reply.json()) as JobReply;
    assert.equal(reply.status, 202, JSON.stringify(job));
    assert.equal(reply.headers.get('location'), `/api/jobs/${job.id}`);
    return job;
  };

  it('seeds exactly the grid tiles over the layer extent, which MapProxy then serves without QGIS Server', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'seeded', author: 'test' });
    await cs.stack.call('POST', '/api/projects/seeded/layers', polygonsLayer(data));
    const job = await submit('seeded', 'seed', { min_zoom: 0, max_zoom: 6 });
    assert.equal(job.state, 'queued');
    const done = await waitForJob(call, job.id);
    assert.equal(done.state, 'succeeded', done.error ?? '');
    assert.deepEqual([done.progress, done.done, done.total], [1, 100, 100]);
    assert.deepEqual(done.result?.['layers'], ['polygons']);
    assert.deepEqual(cached('seeded', 'polygons'), levels(0, 6));

    await sleep(300); // QGIS Server's log arrives on its own pipe
    const before = getMaps();
    for (const tile of levels(0, 6)) {
      const [z = 0, x = 0, y = 0] = tile.split('/').map(Number);
      const image = await cs.tile('seeded', 'polygons', { z, x, y });
      assert.equal(image.width, 256);
    }
    await sleep(300);
    assert.equal(getMaps(), before, 'no GetMap reached QGIS Server');

    const truncation = await submit('seeded', 'truncate', { min_zoom: 5, max_zoom: 6 });
    assert.equal((await waitForJob(call, truncation.id)).state, 'succeeded');
    assert.deepEqual(cached('seeded', 'polygons'), levels(0, 4), 'levels 5 and 6 are gone, the others kept');
  });

  it('seeds a restyled layer again on the levels of its last seed when the style change asks', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'restyled', author: 'test' });
    await cs.stack.call('POST', '/api/projects/restyled/layers', polygonsLayer(data));
    await cs.stack.call('POST', '/api/projects/restyled/layers', { ...polygonsLayer(data), name: 'unseeded' });
    const seed = await submit('restyled', 'seed', { layers: ['polygons'], min_zoom: 7, max_zoom: 8 });
    assert.equal((await waitForJob(call, seed.id)).state, 'succeeded');
    const tileFile = join(cs.configDir, 'cache_data', 'restyled', 'polygons', `${POLYGON_TILE.z}`, `${POLYGON_TILE.x}`);
    const centre = (): number[] => decodePng(readFileSync(join(tileFile, `${POLYGON_TILE.y}.png`))).pixel(128, 128);
    assert.deepEqual(centre(), [229, 182, 54, 255], 'the seeded tile has the default fill');
    assert.equal((await call('POST', '/api/projects/restyled/styles', fillStyle('blue', '#1E3CC8'))).status, 201);

    const restyle = (layer: string): Promise<Response> =>
      fetch(`${cs.stack.api.url}/api/projects/restyled/layers/${layer}/style?reseed=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'blue', current: true }),
      });
    const restyled = await restyle('polygons');
    assert.equal(restyled.status, 200, await restyled.text());
    const [, id] = /^<\/api\/jobs\/([^>]+)>; rel="monitor"$/.exec(restyled.headers.get('link') ?? '') ?? [];
    assert.ok(id, `a Link to the job: ${restyled.headers.get('link')}`);
    const reseeded = await waitForJob(call, id);
    assert.equal(reseeded.state, 'succeeded', reseeded.error ?? '');
    assert.deepEqual(reseeded.params, { layers: ['polygons'], min_zoom: 7, max_zoom: 8, refresh: true });
    assert.deepEqual(cached('restyled', 'polygons'), levels(7, 8), 'the same tiles are cached again');
    assert.deepEqual(centre(), [30, 60, 200, 255], 'drawn with the new style');

    const never = await restyle('unseeded');
    assert.equal(never.status, 200);
    assert.equal(never.headers.get('link'), null, 'a layer never seeded is not seeded now');
  });

  it('refuses what it cannot seed with a clear error before making a job', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'refusing', author: 'test' });
    await cs.stack.call('POST', '/api/projects/refusing/layers', polygonsLayer(data));
    const refused = async (body: unknown, status: number, pattern: RegExp): Promise<void> => {
      const reply = await cs.stack.call('POST', '/api/projects/refusing/cache/seed', body);
      assert.equal(reply.status, status, JSON.stringify(reply.body));
      assert.match((reply.body as { error: string }).error, pattern);
    };
    await refused({ min_zoom: 4, max_zoom: 2 }, 400, /min_zoom/);
    await refused({ min_zoom: 0, max_zoom: 20 }, 400, /max_zoom/);
    await refused({ min_zoom: 0, max_zoom: 2, layers: ['nowhere'] }, 404, /"nowhere"/);
    await refused({ min_zoom: 0, max_zoom: 2, extent: [3, 44, 1, 46] }, 400, /extent/);
    assert.equal(
      (await cs.stack.call('POST', '/api/projects/missing/cache/seed', { min_zoom: 0, max_zoom: 1 })).status,
      404,
    );
    assert.deepEqual((await cs.stack.call('GET', '/api/jobs?project=refusing')).body, []);
  });

  it('seeds a layer smaller than a pixel at the low levels, whose tiles MapProxy then serves', async () => {
    // A square of 0.01 degrees: under a pixel and a half of a tile up to level 7.
    const tiny: [number, number, number, number] = [1.4, 43.6, 1.41, 43.61];
    const file = join(data.dir, 'tiny.gpkg');
    const dataset = gdal.open(file, 'w', 'GPKG');
    const layer = dataset.layers.create('tiny', gdal.SpatialReference.fromEPSG(4326), gdal.wkbPolygon);
    const feature = new gdal.Feature(layer);
    const [xmin, ymin, xmax, ymax] = tiny;
    feature.setGeometry(
      gdal.Geometry.fromWKT(
        `POLYGON((${xmin} ${ymin},${xmax} ${ymin},${xmax} ${ymax},${xmin} ${ymax},${xmin} ${ymin}))`,
      ),
    );
    layer.features.add(feature);
    dataset.close();
    await cs.stack.call('POST', '/api/projects/', { name: 'tiny', author: 'test' });
    const added = await call('POST', '/api/projects/tiny/layers', {
      type: 'vector',
      name: 'tiny',
      datasource: `${file}|layername=tiny`,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const job = await submit('tiny', 'seed', { min_zoom: 0, max_zoom: 3 });
    const ended = await waitForJob(call, job.id);
    assert.equal(ended.state, 'succeeded', JSON.stringify(ended));
    assert.deepEqual(cached('tiny', 'tiny'), seededLevels(tiny, 0, 3));
    const before = getMaps();
    const image = await cs.tile('tiny', 'tiny', { z: 0, x: 0, y: 0 });
    assert.equal(image.width, 256);
    assert.equal(getMaps(), before, 'the seeded tile came from the cache');
  });

  it('fails a seed whose tiles QGIS Server refuses, with the reason, instead of retrying for an hour', async () => {
    const file = join(data.dir, 'vanishing.gpkg');
    cpSync(data.geopackage, file);
    await cs.stack.call('POST', '/api/projects/', { name: 'vanishing', author: 'test' });
    const layer = { type: 'vector', name: 'polygons', datasource: `${file}|layername=polygons` };
    assert.equal((await call('POST', '/api/projects/vanishing/layers', layer)).status, 201);
    rmSync(file);
    const job = await submit('vanishing', 'seed', { min_zoom: 0, max_zoom: 2 });
    const ended = await waitForJob(call, job.id);
    assert.equal(ended.state, 'failed');
    assert.match(ended.error ?? '', /^QGIS Server did not draw the tiles MapProxy asked for/);
  });

  it('stops a cancelled seed at once and leaves every cached tile whole', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'cancelled', author: 'test' });
    await cs.stack.call('POST', '/api/projects/cancelled/layers', polygonsLayer(data));
    const job = await submit('cancelled', 'seed', { min_zoom: 0, max_zoom: 14 });
    await waitForJob(call, job.id, () => cached('cancelled', 'polygons').length > 0);
    const running = (await call('GET', `/api/jobs/${job.id}`)).body as JobReply;
    const progress = new RegExp(
      `^steward_job_progress\\{job="${job.id}",kind="seed",project="cancelled"\\} (\\S+)$`,
      'm',
    );
    const shown = Number(progress.exec(await metrics())?.[1]);
    assert.ok(shown >= running.progress && shown < 1, `progress ${shown} in /metrics, ${running.progress} before`);
    const cancelled = await cs.stack.call('DELETE', `/api/jobs/${job.id}`);
    assert.equal((cancelled.body as JobReply).state, 'cancelled');
    const ended = await metrics();
    assert.doesNotMatch(ended, progress, 'a cancelled job has no progress');
    assert.match(ended, /^steward_jobs\{kind="seed",state="cancelled"\} 1$/m);
    const tiles = cached('cancelled', 'polygons');
    assert.ok(tiles.length > 0 && tiles.length < levels(0, 14).length, `${tiles.length} tiles`);
    await sleep(1000);
    assert.deepEqual(cached('cancelled', 'polygons'), tiles, 'no tile was written after the cancel');
    const dir = join(cs.configDir, 'cache_data', 'cancelled', 'polygons');
    for (const tile of tiles) assert.equal(decodePng(readFileSync(join(dir, `${tile}.png`))).width, 256, tile);
    assert.deepEqual((await cs.stack.call('GET', '/api/projects/cancelled/cache')).body, {
      valid: true,
      storage: 'filesystem',
    });
    assert.equal((await cs.stack.call('DELETE', `/api/jobs/${job.id}`)).status, 409);
  });

  it('reports a seed whose API was killed as failed after a restart, and runs a new one', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'restarted', author: 'test' });
    await cs.stack.call('POST', '/api/projects/restarted/layers', polygonsLayer(data));
    const env = {
      STEWARD_QGISSERVER_URL: cs.stack.qgis.url,
      STEWARD_QGISSERVER_PROJECTS_DIR: cs.stack.projectsDir,
      STEWARD_MAPPROXY_PROJECTS_DIR: cs.configDir,
    };
    const first = await startApiProcess(env);
    const killed = (await first.call('POST', '/api/projects/restarted/cache/seed', { min_zoom: 0, max_zoom: 14 }))
      .body as JobReply;
    await waitForJob(
      (...args) => first.call(...args),
      killed.id,
      () => cached('restarted', 'polygons').length > 0,
    );
    await first.kill();
    const second = await startApiProcess(env);
    try {
      const failed = await waitForJob((...args) => second.call(...args), killed.id);
      assert.equal(failed.state, 'failed');
      assert.match(failed.error ?? '', /stopped before the job ended/);
      const tiles = cached('restarted', 'polygons');
      await sleep(1000);
      assert.deepEqual(cached('restarted', 'polygons'), tiles, 'the seed of the killed API stopped with it');
      const next = (await second.call('POST', '/api/projects/restarted/cache/seed', { min_zoom: 0, max_zoom: 2 }))
        .body as JobReply;
      assert.equal((await waitForJob((...args) => second.call(...args), next.id)).state, 'succeeded');
    } finally {
      await second.kill();
    }
  });
});
