import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { FilesystemTiles } from '../src/tile-cache/filesystem-tiles.js';
import { CacheLayout } from '../src/tile-cache/layout.js';
import { mapproxyConfig } from '../src/tile-cache/mapproxy-config.js';
import { toYaml } from '../src/tile-cache/yaml.js';
import {
  apiStyleChange,
  assertLoads,
  assertStyleChangeClearsTiles,
  type CacheStack,
  POLYGON_TILE,
  polygonsLayer,
  simulatedStyleChange,
  startCacheStack,
} from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { filesUnder, tileUrl, wmtsLayer } from './support/mapproxy.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { INFO_LOG_LEVEL } from './support/qgis-runtime.js';
import { startStack } from './support/stack.js';

describe('tile cache on disk, served by a real MapProxy', () => {
  let cs: CacheStack;
  let data: Fixtures;
  const layerTiles = (project: string, layer: string): string[] =>
    filesUnder(join(cs.configDir, 'cache_data', project, layer), '.png');
  const configText = (project: string): string => readFileSync(cs.configFile(project), 'utf8');

  before(async () => {
    data = makeFixtures();
    cs = await startCacheStack({}, {}, { env: INFO_LOG_LEVEL });
  });
  after(async () => {
    await cs.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('writes a configuration with each new project, which MapProxy loads and serves', async () => {
    assert.equal((await cs.stack.call('POST', '/api/projects/', { name: 'fresh', author: 'test' })).status, 201);
    await assertLoads(cs.configFile('fresh'));
    assert.deepEqual(await cs.stack.call('GET', '/api/projects/fresh/cache'), {
      status: 200,
      body: { valid: true, storage: 'filesystem' },
    });
    const capabilities = await fetch(`${cs.mapproxy.url}/fresh/wmts/1.0.0/WMTSCapabilities.xml`);
    assert.equal(capabilities.status, 200);
  });

  it('adds the source, cache and layer of each new layer, and removes them with the layer and its tiles', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'editing', author: 'test' });
    assert.equal((await cs.stack.call('POST', '/api/projects/editing/layers', polygonsLayer(data))).status, 201);
    await assertLoads(cs.configFile('editing'));
    const rgb = { type: 'raster', name: 'rgb', datasource: data.rgbTiff };
    assert.equal((await cs.stack.call('POST', '/api/projects/editing/layers', rgb)).status, 201);
    await assertLoads(cs.configFile('editing'));
    const text = configText('editing');
    for (const expected of [
      'polygons_wms:',
      'polygons_cache:',
      'rgb_wms:',
      'rgb_cache:',
      'name: "rgb"',
      'grids: ["GLOBAL_WEBMERCATOR"]',
    ]) {
      assert.ok(text.includes(expected), `${expected} in\n${text}`);
    }
    const sourceUrl = new URL(JSON.parse(/url: (".*")/.exec(text)?.[1] ?? '""') as string);
    assert.equal(sourceUrl.origin + sourceUrl.pathname, cs.stack.qgis.url, 'the source is QGIS Server');
    assert.equal(sourceUrl.searchParams.get('MAP'), cs.qgsFile('editing'), 'with the project');
    assert.ok(!text.includes('coverage'), 'sources have no coverage, whose 1 x 1 requests QGIS Server refuses');
    assert.ok(text.includes('transparent: true'));

    const tile = await cs.tile('editing', 'rgb', POLYGON_TILE);
    assert.deepEqual(tile.pixel(128, 128), [200, 40, 90, 255], 'QGIS Server drew the raster through MapProxy');
    assert.ok(layerTiles('editing', 'rgb').length > 0);

    assert.equal((await cs.stack.call('DELETE', '/api/projects/editing/layers/rgb')).status, 200);
    await assertLoads(cs.configFile('editing'));
    assert.ok(!configText('editing').includes('rgb'), 'no trace of the layer is left');
    assert.deepEqual(layerTiles('editing', 'rgb'), [], 'its tiles are gone');
    assert.ok(!existsSync(join(cs.configDir, 'cache_data', 'editing', 'rgb')));
    assert.deepEqual((await cs.stack.call('GET', '/api/projects/editing/cache')).body, {
      valid: true,
      storage: 'filesystem',
    });
  });

  for (const [project, how, change] of [
    ['simulated', 'by layerStyleChanged', simulatedStyleChange],
    ['styled', 'through the styles API', apiStyleChange],
  ] as const) {
    it(`stores the tiles QGIS Server draws; a style change ${how} empties the layer store and the next tile has the new colour`, async () => {
      await cs.stack.call('POST', '/api/projects/', { name: project, author: 'test' });
      await cs.stack.call('POST', `/api/projects/${project}/layers`, polygonsLayer(data));
      const stored = async (): Promise<number> => layerTiles(project, 'polygons').length;
      await assertStyleChangeClearsTiles(cs, project, 'polygons', stored, change(cs, project, 'polygons'));
    });
  }

  it('asks QGIS Server for the layer ids once the project publishes its layers under them', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'ids', author: 'test' });
    assert.equal((await cs.stack.call('POST', '/api/projects/ids/layers', polygonsLayer(data))).status, 201);
    const id = /<layer-tree-layer[^>]*\bid="([^"]+)"/.exec(readFileSync(cs.qgsFile('ids'), 'utf8'))?.[1];
    assert.ok(id, 'the layer has an id');
    assert.ok(!configText('ids').includes(id), 'the source names the layer by its name first');
    const patch = await cs.stack.call('PATCH', '/api/projects/ids/services', { wms: { use_layer_ids: true } });
    assert.equal(patch.status, 200, JSON.stringify(patch.body));
    assert.ok(configText('ids').includes(`layers: "${id}"`), configText('ids'));
    await assertLoads(cs.configFile('ids'));
    const tile = await cs.tile('ids', 'polygons', POLYGON_TILE);
    assert.deepEqual(tile.pixel(128, 128), [229, 182, 54, 255], 'QGIS Server drew the layer asked by its id');
  });

  it('keeps every layer of concurrent additions, writing the configuration atomically', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'busy', author: 'test' });
    const names = Array.from({ length: 12 }, (_, index) => `rgb${index}`);
    const replies = await Promise.all(
      names.map((name) =>
        cs.stack.call('POST', '/api/projects/busy/layers', { type: 'raster', name, datasource: data.rgbTiff }),
      ),
    );
    assert.deepEqual(
      replies.map((reply) => reply.status),
      names.map(() => 201),
    );
    await assertLoads(cs.configFile('busy'));
    const text = configText('busy');
    for (const name of names) assert.ok(text.includes(`name: "${name}"`), name);
    assert.deepEqual(
      readdirSync(cs.configDir).filter((entry) => entry.endsWith('.tmp')),
      [],
      'no temporary file is left',
    );
  });

  it('reports a hand-broken configuration as invalid with the reason, and reset repairs it and clears the tiles', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'broken', author: 'test' });
    await cs.stack.call('POST', '/api/projects/broken/layers', polygonsLayer(data));
    await cs.tile('broken', 'polygons', POLYGON_TILE);
    assert.ok(layerTiles('broken', 'polygons').length > 0);

    writeFileSync(
      cs.configFile('broken'),
      configText('broken').replace('sources: ["polygons_wms"]', 'sources: ["polygons_wms"'),
    );
    const syntax = (await cs.stack.call('GET', '/api/projects/broken/cache')).body as Record<string, unknown>;
    assert.equal(syntax['valid'], false);
    assert.equal(syntax['storage'], 'filesystem');
    assert.match(String(syntax['reason']), /MapProxy cannot load .*broken\.yaml: .*line \d+/);

    writeFileSync(
      cs.configFile('broken'),
      configText('broken').replace('sources: ["polygons_wms"', 'sources: ["nowhere"]'),
    );
    const reference = (await cs.stack.call('GET', '/api/projects/broken/cache')).body as Record<string, unknown>;
    assert.equal(reference['valid'], false);
    assert.match(String(reference['reason']), /nowhere/);

    assert.deepEqual(await cs.stack.call('POST', '/api/projects/broken/cache/reset'), { status: 200, body: true });
    await assertLoads(cs.configFile('broken'));
    assert.deepEqual((await cs.stack.call('GET', '/api/projects/broken/cache')).body, {
      valid: true,
      storage: 'filesystem',
    });
    assert.deepEqual(layerTiles('broken', 'polygons'), [], 'reset cleared the cached tiles');
    const tile = await cs.tile('broken', 'polygons', POLYGON_TILE);
    assert.deepEqual(tile.pixel(128, 128), [229, 182, 54, 255]);
  });

  it('creates the configuration of a project made without Steward on reset', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'template', author: 'test' });
    await cs.stack.call('POST', '/api/projects/template/layers', polygonsLayer(data));
    const folder = join(cs.stack.projectsDir, 'manual');
    cpSync(join(cs.stack.projectsDir, 'template'), folder, { recursive: true });
    renameSync(join(folder, 'template.qgs'), join(folder, 'manual.qgs'));

    const before = (await cs.stack.call('GET', '/api/projects/manual/cache')).body as Record<string, unknown>;
    assert.equal(before['valid'], false);
    assert.match(String(before['reason']), /no cache configuration/);
    assert.equal(
      (
        await cs.stack.call('POST', '/api/projects/manual/layers', {
          type: 'raster',
          name: 'rgb',
          datasource: data.rgbTiff,
        })
      ).status,
      201,
    );
    assert.ok(!existsSync(cs.configFile('manual')), 'adding a layer does not initialise the cache');

    assert.deepEqual(await cs.stack.call('POST', '/api/projects/manual/cache/reset/'), { status: 200, body: true });
    await assertLoads(cs.configFile('manual'));
    assert.deepEqual((await cs.stack.call('GET', '/api/projects/manual/cache/')).body, {
      valid: true,
      storage: 'filesystem',
    });
    assert.deepEqual((await cs.tile('manual', 'polygons', POLYGON_TILE)).pixel(128, 128), [229, 182, 54, 255]);
    assert.deepEqual((await cs.tile('manual', 'rgb', POLYGON_TILE)).pixel(128, 128), [200, 40, 90, 255]);
  });

  it('removes the configuration and every cached tile with the project', async () => {
    await cs.stack.call('POST', '/api/projects/', { name: 'doomed', author: 'test' });
    await cs.stack.call('POST', '/api/projects/doomed/layers', polygonsLayer(data));
    await cs.tile('doomed', 'polygons', POLYGON_TILE);
    assert.ok(existsSync(join(cs.configDir, 'cache_data', 'doomed')));
    assert.equal((await cs.stack.call('DELETE', '/api/projects/doomed')).status, 200);
    assert.ok(!existsSync(cs.configFile('doomed')));
    assert.ok(!existsSync(join(cs.configDir, 'cache_data', 'doomed')));
  });

  it('answers 404 for an unknown project and 400 for a bad name', async () => {
    const missing = await cs.stack.call('GET', '/api/projects/nowhere/cache');
    assert.equal(missing.status, 404);
    assert.match((missing.body as { error: string }).error, /nowhere/);
    assert.equal((await cs.stack.call('POST', '/api/projects/nowhere/cache/reset')).status, 404);
    assert.ok(!existsSync(cs.configFile('nowhere')), 'reset creates nothing for an unknown project');
    assert.equal((await cs.stack.call('GET', '/api/projects/..hidden/cache')).status, 400);
  });

  it('accepts time dimensions on disk and makes them MapProxy dimensions that load', async () => {
    assert.doesNotThrow(() => cs.cache.service.checkTimeDimension(true));
    const layout = new CacheLayout(cs.configDir);
    const time = { values: ['2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z'], default: '2024-02-01T00:00:00Z' };
    const config = mapproxyConfig({
      title: 'timed',
      projectUrl: new URL('http://127.0.0.1:1/ows/?MAP=/tmp/timed.qgs'),
      layers: [{ name: 'rain: daily', wmsName: 'rain: daily', authid: 'EPSG:4326', extent: [1, 44, 3, 46], time }],
      tiles: new FilesystemTiles(layout),
      app: 'timed',
      mapproxyDir: layout.mapproxyDir('timed'),
    });
    const file = join(cs.configDir, 'timed-check.yaml');
    writeFileSync(file, toYaml(config));
    await assertLoads(file);
    const text = readFileSync(file, 'utf8');
    assert.ok(text.includes('forward_req_params: ["time"]'), 'MapProxy forwards TIME to QGIS Server');
    assert.ok(text.includes('values: ["2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"]'));
  });

  it('gives a raster layer added with datetime a time dimension: its tiles at that time come from QGIS Server and are cached per time', async () => {
    const instant = '2024-05-01T00:00:00Z';
    await cs.stack.call('POST', '/api/projects/', { name: 'dated', author: 'test' });
    await cs.stack.call('POST', '/api/projects/dated/layers', polygonsLayer(data));
    const rgb = { type: 'raster', name: 'rgb', datasource: data.rgbTiff, datetime: '2024-05-01T00:00:00' };
    assert.equal((await cs.stack.call('POST', '/api/projects/dated/layers', rgb)).status, 201);
    await assertLoads(cs.configFile('dated'));
    assert.deepEqual((await cs.stack.call('GET', '/api/projects/dated/cache')).body, {
      valid: true,
      storage: 'filesystem',
    });
    const text = configText('dated');
    assert.ok(
      text.includes(`dimensions:\n      time:\n        values: ["${instant}"]\n        default: "${instant}"`),
      text,
    );
    assert.ok(text.includes('forward_req_params: ["time"]'), 'MapProxy forwards TIME to QGIS Server');

    const capabilities = await (await fetch(`${cs.mapproxy.url}/dated/wmts/1.0.0/WMTSCapabilities.xml`)).text();
    const timed = wmtsLayer(capabilities, 'rgb');
    assert.deepEqual(timed?.time, { default: instant, values: [instant] }, capabilities);
    const untimed = wmtsLayer(capabilities, 'polygons');
    assert.ok(untimed && untimed.time === undefined, 'the vector layer has no time dimension');

    const fetchTile = async (url: string): Promise<{ status: number; image?: Image }> => {
      const response = await fetch(url);
      const body = Buffer.from(await response.arrayBuffer());
      return response.status === 200 ? { status: 200, image: decodePng(body) } : { status: response.status };
    };
    const tile = await fetchTile(tileUrl(timed.template, POLYGON_TILE, instant));
    assert.deepEqual(tile.image?.pixel(128, 128), [200, 40, 90, 255], 'QGIS Server drew the raster through MapProxy');
    assert.ok(
      cs.stack.qgis.log.some((line) => line.includes(`TIME:${instant}`)),
      'MapProxy sent TIME to QGIS Server',
    );
    const { z, x, y } = POLYGON_TILE;
    const stored = join(
      cs.configDir,
      'cache_data',
      'dated',
      'rgb',
      `time-${instant}`,
      String(z),
      String(x),
      `${y}.png`,
    );
    assert.deepEqual(
      decodePng(readFileSync(stored)).pixel(128, 128),
      [200, 40, 90, 255],
      'the tile is cached under its time',
    );
    assert.ok(
      layerTiles('dated', 'rgb').every((file) => file.includes(`/rgb/time-${instant}/`)),
      'every tile of the layer is kept per time',
    );

    const kvp = new URL(`${cs.mapproxy.url}/dated/service`);
    const kvpParameters = {
      SERVICE: 'WMTS',
      REQUEST: 'GetTile',
      VERSION: '1.0.0',
      LAYER: 'rgb',
      STYLE: 'default',
      FORMAT: 'image/png',
    };
    const matrix = {
      TILEMATRIXSET: 'GLOBAL_WEBMERCATOR',
      TILEMATRIX: String(z),
      TILECOL: String(x),
      TILEROW: String(y),
      TIME: instant,
    };
    for (const [name, value] of Object.entries({ ...kvpParameters, ...matrix })) kvp.searchParams.set(name, value);
    assert.deepEqual(
      (await fetchTile(kvp.toString())).image?.pixel(128, 128),
      [200, 40, 90, 255],
      'KVP GetTile takes TIME too',
    );

    assert.equal(
      (await fetchTile(tileUrl(timed.template, POLYGON_TILE, '2020-01-01T00:00:00Z'))).status,
      400,
      'a time the layer does not offer',
    );
    assert.ok(!existsSync(join(cs.configDir, 'cache_data', 'dated', 'rgb', 'time-2020-01-01T00:00:00Z')));
    const polygons = await fetchTile(tileUrl(untimed.template, POLYGON_TILE, 'default'));
    assert.deepEqual(
      polygons.image?.pixel(128, 128),
      [229, 182, 54, 255],
      'a layer without time is served at "default"',
    );
    assert.ok(
      layerTiles('dated', 'polygons').length > 0 &&
        layerTiles('dated', 'polygons').every((file) => !file.includes('/time-')),
    );

    assert.equal((await cs.stack.call('DELETE', '/api/projects/dated/layers/rgb')).status, 200);
    await assertLoads(cs.configFile('dated'));
    assert.ok(!configText('dated').includes('{Time}'), 'without a timed layer the tile URLs lose their time');
    assert.ok(!existsSync(join(cs.configDir, 'cache_data', 'dated', 'rgb')), 'the timed tiles went with the layer');
  });

  it('is disabled without STEWARD_MAPPROXY_PROJECTS_DIR: 404 saying so', async () => {
    const plain = await startStack();
    try {
      await plain.call('POST', '/api/projects/', { name: 'p', author: 'test' });
      for (const [method, path] of [
        ['GET', '/api/projects/p/cache'],
        ['POST', '/api/projects/p/cache/reset'],
      ] as const) {
        const reply = await plain.call(method, path);
        assert.equal(reply.status, 404);
        assert.match((reply.body as { error: string }).error, /cache is not enabled.*STEWARD_MAPPROXY_PROJECTS_DIR/);
      }
    } finally {
      await plain.stop();
    }
  });
});
