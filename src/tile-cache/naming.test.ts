import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { readS3Settings, type S3Endpoint } from '../s3-settings.js';
import { type ProjectRepository } from '../services/repository.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { CacheLayout, pathSegment } from './layout.js';
import { type CacheLayer, mapproxyConfig } from './mapproxy-config.js';
import { S3Tiles } from './s3-tiles.js';
import { type TileCacheOptions, TileCacheService } from './service.js';
import { type TileStore } from './tile-store.js';

test('path segments keep ordinary names and cannot climb or nest', () => {
  assert.equal(pathSegment('roads 2024'), 'roads 2024');
  assert.equal(pathSegment('wéird:name'), 'wéird:name');
  assert.equal(pathSegment('a/b'), 'a%2Fb');
  assert.equal(pathSegment('..'), '%2E.');
  assert.equal(pathSegment('.hidden'), '%2Ehidden');
  assert.equal(pathSegment('back\\slash'), 'back%5Cslash');
  assert.equal(pathSegment('50%'), '50%25', 'so that the encoding stays one-to-one');
  assert.equal(pathSegment('line\nbreak'), 'line%0Abreak');
  const layout = new CacheLayout('/srv/mapproxy');
  assert.equal(layout.layerDir('p', '../../etc'), '/srv/mapproxy/cache_data/p/%2E.%2F..%2Fetc');
  assert.equal(layout.legendDir('p'), '/srv/mapproxy/cache_data/p/.mapproxy/legends');
});

test('a path segment too long for a file name keeps its beginning and a hash of the whole name', () => {
  assert.equal(pathSegment('x'.repeat(200)), 'x'.repeat(200));
  const percents = pathSegment('%'.repeat(100));
  assert.match(percents, /^(%25){10}%2~[0-9a-f]{64}$/);
  for (const name of ['%'.repeat(200), 'é'.repeat(300), '🗺'.repeat(100), 'x'.repeat(1000)]) {
    assert.ok(Buffer.byteLength(pathSegment(name)) <= 200, name);
  }
  assert.notEqual(pathSegment(`${'x'.repeat(300)}a`), pathSegment(`${'x'.repeat(300)}b`), 'still one-to-one');
});

const s3EndpointFromEnv = (env: Record<string, string>): S3Endpoint => readS3Settings(env).endpoint;

test("the S3 endpoint comes from AWS_ENDPOINT_URL, or from GDAL's AWS_S3_ENDPOINT and AWS_HTTPS", () => {
  assert.deepEqual(s3EndpointFromEnv({}), { url: undefined, region: undefined });
  assert.deepEqual(
    s3EndpointFromEnv({ AWS_ENDPOINT_URL: 'http://127.0.0.1:9000', AWS_S3_ENDPOINT: 'x:1', AWS_REGION: 'eu-west-3' }),
    {
      url: 'http://127.0.0.1:9000',
      region: 'eu-west-3',
    },
  );
  assert.deepEqual(s3EndpointFromEnv({ AWS_S3_ENDPOINT: 'minio:9000', AWS_DEFAULT_REGION: 'us-east-2' }), {
    url: 'https://minio:9000',
    region: 'us-east-2',
  });
  assert.equal(s3EndpointFromEnv({ AWS_S3_ENDPOINT: 'minio:9000', AWS_HTTPS: 'NO' }).url, 'http://minio:9000');
  assert.equal(s3EndpointFromEnv({ AWS_S3_ENDPOINT: 'http://minio:9000' }).url, 'http://minio:9000');
});

test('S3 keys live under the configured directory, however it is slashed', () => {
  const endpoint = { url: undefined, region: undefined };
  for (const directory of ['/mapproxy/cache', 'mapproxy/cache/', '//mapproxy//cache//']) {
    const tiles = new S3Tiles({ bucket: 'b', directory, endpoint });
    assert.equal(tiles.prefix('p', 'roads'), 'mapproxy/cache/p/roads');
    assert.deepEqual(tiles.cacheOptions('p', 'roads'), {
      type: 's3',
      directory: '/mapproxy/cache/p/roads',
      directory_layout: 'tms',
    });
    tiles.close();
  }
  const atRoot = new S3Tiles({ bucket: 'b', directory: '/', endpoint });
  assert.equal(atRoot.prefix('p'), 'p');
  atRoot.close();
});

test('MapProxy names: one entry per layer name, internal names without `:` or `,` and never shared', () => {
  const store: TileStore = {
    kind: 'filesystem',
    supportsDimensions: true,
    cacheOptions: (app, layer) => ({ type: 'file', directory: `/tiles/${app}/${layer}` }),
    globalCacheOptions: () => ({}),
    clearLayer: async () => undefined,
    clearLevel: async () => undefined,
    clearProject: async () => undefined,
    usage: async () => ({ tiles: 0, bytes: 0 }),
  };
  const layer = (name: string): CacheLayer => ({
    name,
    wmsName: name,
    authid: 'EPSG:4326',
    extent: [0, 0, 1, 1],
  });
  const config = mapproxyConfig({
    title: 'p',
    projectUrl: new URL('http://qgis/ows/?MAP=/p.qgs'),
    layers: [layer('a:b'), layer('a,b'), layer('a_b'), layer('a:b')],
    tiles: store,
    app: 'p',
    mapproxyDir: '/tiles/p/.mapproxy',
  });
  assert.deepEqual(Object.keys(config['sources'] as object), ['a_b_wms', 'a_b_2_wms', 'a_b_3_wms']);
  assert.deepEqual(Object.keys(config['caches'] as object), ['a_b_cache', 'a_b_2_cache', 'a_b_3_cache']);
  const layers = config['layers'] as Array<{ name: string; sources: string[] }>;
  assert.deepEqual(
    layers.map((entry) => [entry.name, entry.sources[0]]),
    [
      ['a:b', 'a_b_cache'],
      ['a,b', 'a_b_2_cache'],
      ['a_b', 'a_b_3_cache'],
    ],
  );
});

test('an app names back the stored projects it could be the app of', async () => {
  const serviceOn = (kind: 'filesystem' | 'postgresql', stored: string[]): TileCacheService => {
    const identity = async (ref: ProjectRef) => (stored.includes(`${ref.schema}.${ref.name}`) ? 'v1' : undefined);
    const repository = { store: { kind, identity } } as unknown as ProjectRepository;
    return new TileCacheService({ repository } as TileCacheOptions);
  };
  const files = serviceOn('filesystem', ['public.town', 'public.a_b']);
  assert.deepEqual(await files.projectsOfApp('town'), [{ name: 'town', schema: 'public' }]);
  assert.deepEqual(await files.projectsOfApp('a_b'), [{ name: 'a_b', schema: 'public' }]);
  assert.deepEqual(await files.projectsOfApp('harbour'), []);
  assert.deepEqual(await files.projectsOfApp('..'), [], 'no name a project may have');
  const database = serviceOn('postgresql', ['public.my_town', 'public_my.town', 'maps.roads']);
  assert.deepEqual(await database.projectsOfApp('public_my_town'), [
    { name: 'my_town', schema: 'public' },
    { name: 'town', schema: 'public_my' },
  ]);
  assert.deepEqual(await database.projectsOfApp('maps_roads'), [{ name: 'roads', schema: 'maps' }]);
  assert.deepEqual(await database.projectsOfApp('roads'), []);
});
