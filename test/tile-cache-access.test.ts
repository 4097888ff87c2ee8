/**
 * The tile cache with access control on: nginx checks a token on every request to QGIS Server,
 * and MapProxy presents the tile cache's own (derived from STEWARD_API_TOKEN, access/token-secret.ts),
 * which reads every project through WMS and can do nothing else.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';

import { tileCacheToken } from '../src/access/token-secret.js';
import { childElements, childText, firstChild, path, type XmlElement } from '../src/qgis/xml/node.js';
import { parseXml } from '../src/qgis/xml/parse.js';
import { withListedLayers } from '../src/tile-cache/capabilities.js';
import { type CacheStack, POLYGON_TILE, polygonsLayer, startCacheStack } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';

const TOKEN = 'the administrator of the tile cache access test';

/** The layers a capabilities document of MapProxy lists, each where its kind of document lists them. */
function listedLayers(document: Buffer): string[] {
  const root = parseXml(document.toString('utf8')).root;
  const elements = (parent: XmlElement | undefined, name: string) => (parent ? childElements(parent, name) : []);
  if (root.name === 'Capabilities')
    return elements(firstChild(root, 'Contents'), 'Layer').map((layer) => childText(layer, 'ows:Identifier'));
  if (root.name === 'TileMapService')
    return elements(firstChild(root, 'TileMaps'), 'TileMap').map((map) => map.attributes.get('title') ?? '');
  const top = path(root, 'Capability', 'Layer');
  assert.equal(firstChild(top as XmlElement, 'Name'), undefined, `the root layer of ${root.name} has no name`);
  return elements(top, 'Layer').map((layer) => childText(layer, 'Name'));
}

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
    const tile = await cs.tile('guarded', 'polygons', POLYGON_TILE, TOKEN);
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

for (const storage of ['filesystem', 'postgresql'] as const)
  describe(`the tile cache behind nginx that asks Steward about each request (${storage} storage)`, () => {
    // MapProxy serves a project at /<project>/, and at /<schema>_<project>/ with projects in PostgreSQL.
    const app = (project: string): string => (storage === 'postgresql' ? `public_${project}` : project);
    const [guardedApp, elsewhereApp] = [app('guarded'), app('elsewhere')];
    let cs: CacheStack;
    const tokens: Record<string, string> = {};
    const { z, x, y } = POLYGON_TILE;
    const tilePath = (layer: string) => `/${guardedApp}/wmts/${layer}/GLOBAL_WEBMERCATOR/${z}/${x}/${y}.png`;
    const wmsMap = (layers: string) =>
      `/${guardedApp}/service?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=${layers}&STYLES=&CRS=EPSG:3857&BBOX=0,5000000,500000,5500000&WIDTH=64&HEIGHT=64&FORMAT=image/png`;
    /** `path` of MapProxy through nginx as `who` (a role's token, `admin`, or nobody). */
    const fetched = async (path: string, who?: string): Promise<{ status: number; body: Buffer }> => {
      const token = who === 'admin' ? TOKEN : who === undefined ? undefined : tokens[who];
      const headers = token === undefined ? undefined : { authorization: `Bearer ${token}` };
      const response = await fetch(`${cs.tilesUrl}${path}`, { headers });
      return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
    };
    /** The API's own answer to nginx's question about `path` for `who`. */
    const judged = (path: string, who?: string) =>
      fetch(`${cs.stack.api.url}/api/auth/tiles`, {
        headers: { 'x-original-uri': path, ...(who && { authorization: `Bearer ${tokens[who]}` }) },
      }).then(async (response) => ({ status: response.status, body: await response.text() }));

    before(async () => {
      const data = makeFixtures();
      cs = await startCacheStack({ apiToken: TOKEN, dataRoots: [data.dir] }, {}, {}, storage);
      const admin = (method: string, path: string, body?: unknown) =>
        apiCall(cs.stack.api.url, method, path, body, TOKEN);
      for (const project of ['guarded', 'elsewhere']) {
        assert.equal((await admin('POST', '/api/projects', { name: project, author: 'a' })).status, 201);
        for (const layer of ['polygons', 'lines', 'points']) {
          const body = { ...polygonsLayer(data), name: layer, datasource: `${data.geopackage}|layername=${layer}` };
          assert.equal((await admin('POST', `/api/projects/${project}/layers`, body)).status, 201);
        }
      }
      const roles = {
        viewer: {
          projects: { guarded: { access: 'read', layers: { lines: { read: false }, points: { filter: '1 = 1' } } } },
        },
        attributes: { projects: { guarded: { access: 'read', layers: { polygons: { hidden_attributes: ['fid'] } } } } },
        whole: { projects: { guarded: { access: 'read', layers: { elsewhere_only: { read: false } } } } },
        stranger: { projects: { elsewhere: { access: 'read' } } },
        maps: { projects: { guarded: { access: 'read' } }, services: { WMTS: false } },
      };
      for (const [role, definition] of Object.entries(roles)) {
        assert.equal((await admin('PUT', `/api/roles/${role}`, definition)).status, 201);
        const made = await admin('POST', '/api/tokens', { name: role, roles: [role] });
        tokens[role] = (made.body as { token: string }).token;
      }
    });
    after(async () => {
      await cs?.stop();
    });

    it('asks for a token, as before QGIS Server, and refuses projects the identity may not read', async () => {
      assert.equal((await fetched(tilePath('polygons'))).status, 401);
      const anonymous = await judged(tilePath('polygons'));
      assert.equal(anonymous.status, 401);
      assert.equal((JSON.parse(anonymous.body) as { code: string }).code, 'token_missing');
      assert.equal((await fetched(tilePath('polygons'), 'stranger')).status, 403);
      assert.match(
        (await judged(tilePath('polygons'), 'stranger')).body,
        new RegExp(`\\\\"${guardedApp}\\\\" names no project this identity may read`),
      );
      const elsewhere = await fetched(tilePath('polygons').replace(`/${guardedApp}/`, `/${elsewhereApp}/`), 'stranger');
      assert.equal(elsewhere.status, 200);
    });

    it('serves a readable layer as a PNG tile, and refuses hidden, filtered and attribute-hidden layers', async () => {
      const tile = await cs.tile(guardedApp, 'polygons', POLYGON_TILE, tokens['viewer']);
      assert.deepEqual(tile.pixel(128, 128), [229, 182, 54, 255]);
      const png = await fetched(tilePath('polygons'), 'viewer');
      assert.deepEqual([...png.body.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
      assert.equal((await fetched(wmsMap('polygons'), 'viewer')).status, 200);
      for (const path of [
        tilePath('lines'),
        tilePath('points'),
        `/${guardedApp}/tms/1.0.0/lines/GLOBAL_WEBMERCATOR/${z}/${x}/${2 ** z - 1 - y}.png`,
        wmsMap('polygons,lines'),
      ]) {
        assert.equal((await fetched(path, 'viewer')).status, 403, path);
      }
      assert.match((await judged(tilePath('lines'), 'viewer')).body, /layer \\"lines\\" is hidden from this identity/);
      assert.match((await judged(tilePath('points'), 'viewer')).body, /is filtered for this identity/);
      assert.equal((await fetched(tilePath('polygons'), 'attributes')).status, 403);
      assert.match((await judged(tilePath('polygons'), 'attributes')).body, /has attributes hidden from this identity/);
    });

    it("refuses the tile services a role's rules refuse, and serves its maps", async () => {
      for (const path of [
        tilePath('polygons'),
        `/${guardedApp}/tms/1.0.0/polygons/GLOBAL_WEBMERCATOR/${z}/${x}/${2 ** z - 1 - y}.png`,
      ])
        assert.equal((await fetched(path, 'maps')).status, 403, path);
      assert.match((await judged(tilePath('polygons'), 'maps')).body, /WMTS is refused to this identity/);
      const map = await fetched(wmsMap('polygons'), 'maps');
      assert.equal(map.status, 200);
      assert.deepEqual([...map.body.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG');
    });

    it('lists in the capabilities only the layers a role may read whole, whose tiles it then gets', async () => {
      const documents = [
        `/${guardedApp}/wmts/1.0.0/WMTSCapabilities.xml`,
        `/${guardedApp}/service?SERVICE=WMTS&REQUEST=GetCapabilities`,
        `/${guardedApp}/tms/1.0.0/`,
        `/${guardedApp}/service?SERVICE=WMS&REQUEST=GetCapabilities`,
        `/${guardedApp}/wms?SERVICE=WMS&REQUEST=GetCapabilities&VERSION=1.1.1`,
      ];
      for (const document of documents) {
        const full = await fetched(document, 'admin');
        assert.equal(full.status, 200, document);
        assert.deepEqual(listedLayers(full.body).sort(), ['lines', 'points', 'polygons'], document);
        const listed = await fetched(document, 'viewer');
        assert.equal(listed.status, 200, `${document}: ${listed.body.toString().slice(0, 300)}`);
        assert.deepEqual(listedLayers(listed.body), ['polygons'], 'neither the hidden nor the filtered layer');
        // MapProxy's document, its addresses the client's, less the other layers.
        const text = full.body.toString('utf8');
        assert.equal(
          withListedLayers(text, () => true),
          text,
          'written back byte for byte',
        );
        assert.equal(
          listed.body.toString('utf8'),
          withListedLayers(text, (layer) => layer === 'polygons'),
          document,
        );
        assert.deepEqual(listedLayers((await fetched(document, 'attributes')).body), ['lines', 'points'], document);
      }
      const wmts = parseXml((await fetched(documents[0] as string, 'viewer')).body.toString('utf8')).root;
      const template = path(wmts, 'Contents', 'Layer', 'ResourceURL')?.attributes.get('template') ?? '';
      assert.ok(template.startsWith(`${cs.tilesUrl}/${guardedApp}/wmts/polygons/`), template);
      const tileUrl = template
        .replace('{TileMatrixSet}', 'GLOBAL_WEBMERCATOR')
        .replace('{TileMatrix}', String(z))
        .replace('{TileCol}', String(x))
        .replace('{TileRow}', String(y))
        .slice(cs.tilesUrl.length);
      const tile = await fetched(tileUrl, 'viewer');
      assert.equal(tile.status, 200);
      assert.deepEqual([...tile.body.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG');
      assert.equal((await fetched(tileUrl.replace('/polygons/', '/lines/'), 'viewer')).status, 403);
      const tms = parseXml((await fetched(documents[2] as string, 'viewer')).body.toString('utf8')).root;
      const href = firstChild(firstChild(tms, 'TileMaps') as XmlElement, 'TileMap')?.attributes.get('href') ?? '';
      assert.equal(href, `${cs.tilesUrl}/${guardedApp}/tms/1.0.0/polygons/GLOBAL_WEBMERCATOR`);
      const layerDocument = await fetched(href.slice(cs.tilesUrl.length), 'viewer');
      assert.equal(layerDocument.status, 200, "a readable layer's TMS document");
      assert.equal(parseXml(layerDocument.body.toString('utf8')).root.name, 'TileMap');
    });

    it('marks the refusal of capabilities for nginx, and keeps every other refusal', async () => {
      const check = await fetch(`${cs.stack.api.url}/api/auth/tiles`, {
        headers: {
          'x-original-uri': `/${guardedApp}/wmts/1.0.0/WMTSCapabilities.xml`,
          authorization: `Bearer ${tokens['viewer']}`,
        },
      });
      assert.equal(check.status, 403);
      assert.equal(check.headers.get('x-steward-capabilities'), 'filtered');
      for (const path of [
        `/${guardedApp}/demo/`,
        `/${guardedApp}/`,
        `/${guardedApp}/service?SERVICE=WMS&REQUEST=GetCapabilities&LAYERS=lines`,
        `/${guardedApp}/service?REQUEST=GetMap&REQUEST=GetCapabilities&LAYERS=polygons`,
      ]) {
        const refusal = await fetched(path, 'viewer');
        assert.equal(refusal.status, 403, path);
        assert.match(refusal.body.toString(), /<title>403 Forbidden<\/title>/, "nginx's own refusal");
      }
      assert.equal(
        (await fetched(`/${guardedApp}/wmts/1.0.0/WMTSCapabilities.xml`, 'maps')).status,
        403,
        'WMTS refused',
      );
      assert.equal((await fetched(`/${guardedApp}/wmts/1.0.0/WMTSCapabilities.xml`)).status, 401, 'no token');
      assert.equal((await fetched('/_steward_tiles_capabilities', 'viewer')).status, 404, 'internal to nginx');
      const direct = await fetch(`${cs.stack.api.url}/api/auth/tiles/capabilities`, {
        headers: { 'x-original-uri': tilePath('polygons'), authorization: `Bearer ${tokens['viewer']}` },
      });
      assert.equal(direct.status, 403, 'never a tile');
    });

    it('serves capabilities whole through MapProxy to those who may read every layer, and the list of projects to administrators', async () => {
      const capabilities = `/${guardedApp}/wmts/1.0.0/WMTSCapabilities.xml`;
      const whole = await fetched(capabilities, 'whole');
      assert.equal(whole.status, 200);
      assert.deepEqual(listedLayers(whole.body).sort(), ['lines', 'points', 'polygons']);
      assert.equal((await fetched('/', 'whole')).status, 403);
      const listing = await fetched('/', 'admin');
      assert.equal(listing.status, 200);
      assert.ok(listing.body.toString().includes(elsewhereApp), "the listing names the other project's app");
    });

    it('gives administrators and the tile cache token every tile', async () => {
      for (const layer of ['polygons', 'lines', 'points']) {
        assert.equal((await fetched(tilePath(layer), 'admin')).status, 200, layer);
        const response = await fetch(`${cs.tilesUrl}${tilePath(layer)}`, {
          headers: { authorization: `Bearer ${tileCacheToken(TOKEN)}` },
        });
        assert.equal(response.status, 200, layer);
      }
    });

    it('refuses the ways round the check a client could try', async () => {
      // Each names the hidden layer `lines`, or may list it: none may answer with it.
      for (const path of [
        `/${guardedApp}/wmts/1.0.0/WMTSCapabilities.xml?REQUEST=GetTile&LAYER=polygons`,
        `//${guardedApp}/wmts/1.0.0/WMTSCapabilities.xml`,
        `/${guardedApp}%2Fwmts%2F1.0.0%2FWMTSCapabilities.xml`,
        `/${guardedApp}/tms/1.0.0`,
      ]) {
        const { status, body } = await fetched(path, 'viewer');
        assert.equal(status, 200, path);
        assert.deepEqual(listedLayers(body), ['polygons'], path);
      }
      for (const path of [
        `/${guardedApp}/service?REQUEST=GetMap&REQUEST=GetCapabilities&LAYERS=polygons`,
        `/gu%61rded/wmts/%6Cines/GLOBAL_WEBMERCATOR/${z}/${x}/${y}.png`,
        `/${guardedApp}/tms/1.0.0/lines/GLOBAL_WEBMERCATOR`,
        `/${guardedApp}/tms/1.0.0/polygons/1.0.0`,
        `/${guardedApp}/tms/1.0.0/%0A`,
        `/${guardedApp}/tiles/lines/GLOBAL_WEBMERCATOR/${z}/${x}/${y}.png`,
        `/${guardedApp}/service?SERVICE=WMTS&REQUEST=GetTile&LAYER=lines&STYLE=&TILEMATRIXSET=GLOBAL_WEBMERCATOR&TILEMATRIX=${z}&TILEROW=${y}&TILECOL=${x}&FORMAT=image/png`,
        `/${guardedApp}/service?SERVICE=WMS&REQUEST=GetLegendGraphic&LAYER=lines&FORMAT=image/png`,
        `/${guardedApp}/service?SERVICE=WMS&request=GetMap&layers=polygons&LAYERS=lines&STYLES=&CRS=EPSG:3857&BBOX=0,5000000,500000,5500000&WIDTH=64&HEIGHT=64&FORMAT=image/png`,
        `/${guardedApp}/`,
      ]) {
        const { status } = await fetched(path, 'viewer');
        assert.equal(status, 403, path);
      }
      // MapProxy would take a client's X-Script-Name off the path: nginx sends none.
      const response = await fetch(`${cs.tilesUrl}/${elsewhereApp}/${guardedApp}/wmts/1.0.0/WMTSCapabilities.xml`, {
        headers: { authorization: `Bearer ${tokens['stranger']}`, 'x-script-name': `/${elsewhereApp}` },
      });
      assert.equal(response.status, 404, 'MapProxy saw the path nginx was asked about');
    });
  });
