/**
 * The tile cache with access control on: nginx checks a token on every request to QGIS Server,
 * and MapProxy presents the tile cache's own (derived from STEWARD_API_TOKEN, access/token-secret.ts),
 * which reads every project through WMS and can do nothing else.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';

import { tileCacheToken } from '../src/access/token-secret.js';
import { type CacheStack, POLYGON_TILE, polygonsLayer, startCacheStack } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';

const TOKEN = 'the administrator of the tile cache access test';

describe('the tile cache behind nginx that checks tokens', () => {
  let cs: CacheStack;
  let data: Fixtures;
  const call = (method: string, path: string, body?: unknown, token = TOKEN) =>
    apiCall(cs.stack.api.url, method, path, body, token);
  const owsStatus = async (query: string, token: string | undefined): Promise<number> => {
    const map = encodeURIComponent(cs.qgsFile('guarded'));
    const headers = token === undefined ? undefined : { authorization: `Bearer ${token}` };
    const response = await fetch(`${cs.stack.qgis.url}?MAP=${map}&${query}`, { headers });
    await response.arrayBuffer();
    return response.status;
  };

  before(async () => {
    data = makeFixtures();
    cs = await startCacheStack({ apiToken: TOKEN, dataRoots: [data.dir] });
    assert.equal((await call('POST', '/api/projects', { name: 'guarded', author: 'a' })).status, 201);
    assert.equal((await call('POST', '/api/projects/guarded/layers', polygonsLayer(data))).status, 201);
  });
  after(async () => {
    await cs?.stop();
  });

  it('has MapProxy draw tiles through nginx with the tile cache token', async () => {
    assert.equal(await owsStatus('SERVICE=WMS&REQUEST=GetCapabilities', undefined), 401, 'nginx checks tokens');
    const tile = await cs.tile('guarded', 'polygons', POLYGON_TILE);
    assert.deepEqual(tile.pixel(128, 128), [229, 182, 54, 255], 'QGIS Server drew the polygon for MapProxy');
  });

  it('keeps the token in a configuration only its user may read, and never STEWARD_API_TOKEN', () => {
    const file = cs.configFile('guarded');
    const text = readFileSync(file, 'utf8');
    assert.ok(text.includes(`Bearer ${tileCacheToken(TOKEN)}`), text);
    assert.ok(!text.includes(TOKEN), 'the administrator token is not written');
    assert.equal(statSync(file).mode & 0o777, 0o600);
  });

  it('gives the tile cache token maps and legends through WMS, and nothing else', async () => {
    const cacheToken = tileCacheToken(TOKEN);
    const getMap =
      'SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=polygons&STYLES=&CRS=EPSG:4326&BBOX=44,1,46,3&WIDTH=64&HEIGHT=64&FORMAT=image/png';
    assert.equal(await owsStatus(getMap, cacheToken), 200);
    assert.equal(await owsStatus('SERVICE=WFS&REQUEST=GetCapabilities', cacheToken), 403);
    assert.equal(await owsStatus('SERVICE=WMS&REQUEST=GetFeatureInfo', cacheToken), 403);
    assert.equal((await call('GET', '/api/tokens', undefined, cacheToken)).status, 403);
    assert.equal((await call('DELETE', '/api/projects/guarded', undefined, cacheToken)).status, 403);
  });
});
