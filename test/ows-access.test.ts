/**
 * Roles enforced by QGIS Server, on the production stack (nginx's auth_request to Steward, the
 * plugin's access filter in each qgis_mapserv.fcgi): a project of two layers, a viewer role that
 * hides one layer, hides an attribute of the other and filters its features, and a reader that
 * may see everything. Capabilities, maps (pixels, against maps of what the role may see),
 * GetFeatureInfo, WFS GetFeature and WFS-T, through nginx with a token and through the API's own
 * map routes.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { apiCall } from './support/http.js';
import { PLUGIN_PATH } from './support/insight-stack.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, differingPixels, type Image } from './support/png.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { type Stack, startStack } from './support/stack.js';
import { until } from './support/wait.js';

const ADMIN = 'the bootstrap administrator of the OWS access test';
const PUBLIC = `"kind" = 'public'`;
const VIEWER_ROLE = {
  projects: {
    town: {
      access: 'read',
      layers: { secret: { read: false }, roads: { hidden_attributes: ['owner'], filter: PUBLIC } },
    },
  },
  services: { 'WFS-T': false },
};
const READER_ROLE = { projects: { town: { access: 'read' } } };
const EDITOR_ROLE = { projects: { town: { access: 'write' } } };
/** CRS:84 (lon, lat), 10 pixels a degree: the squares of write_access_project.py. */
const VIEW = 'VERSION=1.3.0&STYLES=&CRS=CRS:84&BBOX=0,0,4,4&WIDTH=40&HEIGHT=40&TRANSPARENT=TRUE';

type Answer = { status: number; type: string; body: Buffer };

describe('roles enforced by QGIS Server through nginx and the API', () => {
  let stack: Stack;
  let map = '';
  let allowedMap = '';
  const tokens: Record<string, string> = {};

  const admin = (method: string, path: string, body?: unknown) => apiCall(stack.api.url, method, path, body, ADMIN);

  /** A request to QGIS Server through nginx, as `who` (a role's token, the administrator, or nobody). */
  const ows = async (who: string | undefined, query: string, init: RequestInit = {}): Promise<Answer> => {
    const token = who === undefined ? undefined : who === 'admin' || who === 'allowed' ? ADMIN : tokens[who];
    const headers = { ...(token !== undefined && { authorization: `Bearer ${token}` }) };
    const project = who === 'allowed' ? allowedMap : map;
    const url = `${stack.qgis.url}?MAP=${encodeURIComponent(project)}&${query}`;
    const response = await fetch(url, { ...init, headers: { ...headers, ...(init.headers as object) } });
    return {
      status: response.status,
      type: response.headers.get('content-type') ?? '',
      body: Buffer.from(await response.arrayBuffer()),
    };
  };
  const text = async (who: string | undefined, query: string): Promise<string> => {
    const answer = await ows(who, query);
    assert.equal(answer.status, 200, `${who} ${query}: ${answer.body.toString().slice(0, 300)}`);
    return answer.body.toString('utf8');
  };
  const image = async (who: string, query: string): Promise<Image> => {
    const answer = await ows(who, `SERVICE=WMS&REQUEST=GetMap&FORMAT=image/png&${VIEW}&${query}`);
    assert.equal(answer.type, 'image/png', `${who} ${query}: ${answer.body.toString().slice(0, 300)}`);
    return decodePng(answer.body);
  };
  const features = async (who: string, layer: string): Promise<Array<Record<string, unknown>>> => {
    const json = await text(
      who,
      `SERVICE=WFS&VERSION=1.1.0&REQUEST=GetFeature&TYPENAME=${layer}&OUTPUTFORMAT=application/json`,
    );
    const collection = JSON.parse(json) as { features: Array<{ properties: Record<string, unknown> }> };
    return collection.features.map((feature) => feature.properties);
  };

  before(async () => {
    stack = await startStack(
      { apiToken: ADMIN, tokenFailures: 100 },
      { env: { QGIS_PLUGINPATH: PLUGIN_PATH } },
      'filesystem',
    );
    const folder = join(stack.projectsDir, 'town');
    mkdirSync(folder);
    runPyqgisScript('write_access_project.py', join(folder, 'town.qgs'));
    map = join(folder, 'town.qgs');
    // What the viewer may see, as a project of its own: its maps must be the viewer's.
    mkdirSync(join(stack.projectsDir, 'allowed'));
    allowedMap = join(stack.projectsDir, 'allowed', 'allowed.qgs');
    runPyqgisScript('write_access_project.py', allowedMap, 'public');
    for (const [role, definition] of Object.entries({
      viewer: VIEWER_ROLE,
      reader: READER_ROLE,
      editor: EDITOR_ROLE,
    })) {
      assert.equal((await admin('PUT', `/api/roles/${role}`, definition)).status, 201);
      const made = await admin('POST', '/api/tokens', { name: role, roles: [role] });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      tokens[role] = (made.body as { token: string }).token;
    }
  });
  after(() => stack?.stop());

  it('asks for a token, and refuses a wrong one or another project', async () => {
    assert.equal((await ows(undefined, 'SERVICE=WMS&REQUEST=GetCapabilities')).status, 401);
    tokens['wrong'] = 'stw_0123456789abcdef_wrong';
    assert.equal((await ows('wrong', 'SERVICE=WMS&REQUEST=GetCapabilities')).status, 401);
    const elsewhere = await fetch(`${stack.qgis.url}?MAP=/etc/passwd.qgs&SERVICE=WMS&REQUEST=GetCapabilities`, {
      headers: { authorization: `Bearer ${tokens['reader']}` },
    });
    assert.equal(elsewhere.status, 403);
    // A header of the parameter's name is no parameter: the viewer still sees only what it may.
    const forged = await ows('viewer', 'SERVICE=WMS&REQUEST=GetCapabilities', {
      headers: { 'steward-access': '', 'x-steward-access': '' },
    });
    assert.ok(!forged.body.toString().includes('<Name>secret</Name>'));
  });

  it('gives requests without a token the anonymous role, while it exists', async () => {
    const anonymous = { projects: { town: { access: 'read', layers: { secret: { read: false } } } } };
    assert.equal((await admin('PUT', '/api/roles/anonymous', anonymous)).status, 201);
    try {
      const capabilities = await text(undefined, 'SERVICE=WMS&REQUEST=GetCapabilities');
      assert.match(capabilities, /<Name>roads<\/Name>/);
      assert.doesNotMatch(capabilities, /<Name>secret<\/Name>/);
      assert.equal((await ows(undefined, 'SERVICE=WFS&REQUEST=GetFeature&TYPENAME=secret')).status, 403);
    } finally {
      assert.equal((await admin('DELETE', '/api/roles/anonymous')).status, 200);
    }
    assert.equal((await ows(undefined, 'SERVICE=WMS&REQUEST=GetCapabilities')).status, 401);
  });

  it('lists in the capabilities only the layers a role may read', async () => {
    const viewer = await text('viewer', 'SERVICE=WMS&REQUEST=GetCapabilities');
    assert.match(viewer, /<Name>roads<\/Name>/);
    assert.doesNotMatch(viewer, /<Name>secret<\/Name>/);
    const reader = await text('reader', 'SERVICE=WMS&REQUEST=GetCapabilities');
    assert.match(reader, /<Name>secret<\/Name>/);
    const wfs = await text('viewer', 'SERVICE=WFS&REQUEST=GetCapabilities');
    assert.doesNotMatch(wfs, /<Name>secret<\/Name>/);
    assert.match(wfs, /<Name>roads<\/Name>/);
  });

  it('refuses the legend of a hidden layer, and a service every role of the identity refuses', async () => {
    const legend = (who: string, layer: string) =>
      ows(who, `SERVICE=WMS&VERSION=1.3.0&REQUEST=GetLegendGraphic&LAYER=${layer}&FORMAT=image/png`);
    assert.equal((await legend('viewer', 'secret')).status, 403);
    assert.equal((await legend('viewer', 'roads')).type, 'image/png');
    const mapsOnly = {
      projects: { town: { access: 'read' } },
      services: { GetFeatureInfo: false, WFS: false, OAPIF: false },
    };
    assert.equal((await admin('PUT', '/api/roles/maps-only', mapsOnly)).status, 201);
    const made = await admin('POST', '/api/tokens', { name: 'maps-only', roles: ['maps-only'] });
    tokens['maps-only'] = (made.body as { token: string }).token;
    const info = `SERVICE=WMS&REQUEST=GetFeatureInfo&${VIEW}&LAYERS=roads&QUERY_LAYERS=roads&I=5&J=35`;
    assert.equal((await ows('maps-only', info)).status, 403);
    assert.equal((await ows('maps-only', 'SERVICE=WFS&REQUEST=GetCapabilities')).status, 403);
    assert.equal((await ows('maps-only', 'service=wfs&request=GetFeature&typename=roads')).status, 403);
    // OGC API Features is named by its path, not by SERVICE.
    const features = new URL(`wfs3/collections/roads/items.json?MAP=${encodeURIComponent(map)}`, stack.qgis.url);
    const oapif = (who: string) => fetch(features, { headers: { authorization: `Bearer ${tokens[who]}` } });
    assert.equal((await oapif('maps-only')).status, 403);
    assert.equal((await oapif('reader')).status, 200);
    assert.equal((await image('maps-only', 'LAYERS=roads')).width, 40);
    assert.equal((await ows('reader', info)).status, 200);
  });

  it('draws only the features and layers a role may see', async () => {
    const viewer = await image('viewer', 'LAYERS=roads');
    const allowed = await image('allowed', 'LAYERS=roads');
    const whole = await image('admin', 'LAYERS=roads');
    assert.equal(differingPixels(viewer, allowed), 0, 'the viewer sees the public roads only');
    assert.ok(differingPixels(whole, allowed) >= 100, 'the private road is drawn for others');
    assert.equal(differingPixels(await image('reader', 'LAYERS=roads'), whole), 0, 'the reader sees every road');
    const hidden = await ows('viewer', `SERVICE=WMS&REQUEST=GetMap&FORMAT=image/png&${VIEW}&LAYERS=roads,secret`);
    assert.notEqual(hidden.type, 'image/png');
    assert.equal(hidden.status, 403);
    const both = await image('reader', 'LAYERS=roads,secret');
    assert.ok(differingPixels(both, whole) >= 100, 'the secret layer is drawn for the reader');
  });

  it('leaves hidden attributes and filtered features out of GetFeatureInfo and GetFeature', async () => {
    assert.deepEqual(await features('viewer', 'roads'), [
      { fid: 1, kind: 'public' },
      { fid: 3, kind: 'public' },
    ]);
    assert.deepEqual(
      (await features('reader', 'roads')).map((row) => row['owner']),
      ['ann', 'bob', 'cat'],
    );
    assert.equal((await ows('viewer', 'SERVICE=WFS&REQUEST=GetFeature&TYPENAME=secret')).status, 403);
    const info = (who: string, i: number, j: number) =>
      text(
        who,
        `SERVICE=WMS&REQUEST=GetFeatureInfo&${VIEW}&LAYERS=roads&QUERY_LAYERS=roads&INFO_FORMAT=application/json&I=${i}&J=${j}`,
      ).then((json) =>
        (JSON.parse(json) as { features: Array<{ properties: unknown }> }).features.map((f) => f.properties),
      );
    assert.deepEqual(await info('viewer', 5, 35), [{ fid: 1, kind: 'public' }]);
    assert.deepEqual(await info('viewer', 25, 35), [], 'the private road is not found');
    assert.deepEqual(await info('reader', 25, 35), [{ fid: 2, kind: 'private', owner: 'bob' }]);
  });

  it("applies a role's rules to the API's map routes", async () => {
    const layerMap = async (who: string): Promise<Image> => {
      const response = await fetch(`${stack.api.url}/api/projects/town/layers/roads/map`, {
        headers: { authorization: `Bearer ${who === 'admin' ? ADMIN : tokens[who]}` },
      });
      assert.equal(response.status, 200);
      return decodePng(Buffer.from(await response.arrayBuffer()));
    };
    const { body } = await admin('GET', '/api/projects/town/layers/roads/map/url');
    const url = new URL((body as { url: string }).url);
    url.searchParams.set('MAP', allowedMap);
    const filtered = await fetch(url, { headers: { authorization: `Bearer ${ADMIN}` } });
    const allowed = decodePng(Buffer.from(await filtered.arrayBuffer()));
    assert.equal(differingPixels(await layerMap('viewer'), allowed), 0, 'the viewer sees the public roads only');
    assert.equal(differingPixels(await layerMap('admin'), await layerMap('reader')), 0);
    assert.ok(differingPixels(await layerMap('reader'), allowed) >= 100);
    const view = await fetch(
      `${stack.api.url}/api/projects/town/wms?layers=roads&crs=EPSG:4326&bbox=0,0,4,4&width=40&height=40`,
      { headers: { authorization: `Bearer ${tokens['viewer']}` } },
    );
    assert.equal(view.status, 200);
    const viewed = decodePng(Buffer.from(await view.arrayBuffer()));
    assert.equal(differingPixels(viewed, await image('allowed', 'LAYERS=roads')), 0);
  });

  it("draws a style preview under the identity's rules, and only for those who may write", async () => {
    const red = {
      type: 'vector',
      name: 'red',
      symbology: { type: 'single_symbol', symbol: 'fill', properties: { color: '#FF0000', outline_style: 'no' } },
    };
    const filteredEditor = { projects: { town: { access: 'write', layers: { roads: { filter: PUBLIC } } } } };
    assert.equal((await admin('PUT', '/api/roles/filtered-editor', filteredEditor)).status, 201);
    const made = await admin('POST', '/api/tokens', { name: 'filtered-editor', roles: ['filtered-editor'] });
    tokens['filtered-editor'] = (made.body as { token: string }).token;
    const preview = (project: string, who: string) =>
      fetch(
        `${stack.api.url}/api/projects/${project}/layers/roads/style-preview?layers=roads&crs=EPSG:4326&bbox=0,0,4,4&width=40&height=40`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${who === 'admin' ? ADMIN : tokens[who]}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify(red),
        },
      );
    const png = async (project: string, who: string): Promise<Image> => {
      const response = await preview(project, who);
      assert.equal(response.status, 200, `${who}: ${response.status}`);
      return decodePng(Buffer.from(await response.arrayBuffer()));
    };
    const publicRoads = await png('allowed', 'admin');
    assert.ok(publicRoads.paintedPixels() > 0, 'the public roads are drawn');
    assert.equal(differingPixels(await png('town', 'filtered-editor'), publicRoads), 0, 'the private road is not');
    assert.ok(differingPixels(await png('town', 'editor'), publicRoads) >= 100, 'an editor without rules sees it');
    assert.equal((await preview('town', 'reader')).status, 403, 'a reader may not preview styles');
  });

  it("lets an administrator view the API's maps, legends, features and layers as a role, and no one else", async () => {
    const get = (path: string, token = ADMIN) =>
      fetch(`${stack.api.url}/api/projects/town${path}`, { headers: { authorization: `Bearer ${token}` } });
    const view = 'crs=EPSG:4326&bbox=0,0,4,4&width=40&height=40';
    const png = async (path: string): Promise<Image> => {
      const response = await get(path);
      assert.equal(response.status, 200, path);
      return decodePng(Buffer.from(await response.arrayBuffer()));
    };
    const asViewer = await png(`/wms?layers=roads&${view}&view_as=viewer`);
    assert.equal(differingPixels(asViewer, await image('allowed', 'LAYERS=roads')), 0, 'drawn as the viewer');
    assert.ok(differingPixels(asViewer, await png(`/wms?layers=roads&${view}`)) >= 100, 'not as the administrator');
    assert.equal(
      differingPixels(
        await png(`/wms?layers=roads,secret&${view}&view_as=reader`),
        await image('reader', 'LAYERS=roads,secret'),
      ),
      0,
    );
    const found = async (i: number, viewAs: string): Promise<unknown[]> => {
      const response = await get(`/feature-info?layers=roads&${view}&i=${i}&j=35${viewAs}`);
      assert.equal(response.status, 200);
      const { features } = (await response.json()) as { features: Array<{ properties: object }> };
      return features.map((feature) => feature.properties);
    };
    assert.deepEqual(await found(5, '&view_as=viewer'), [{ fid: 1, kind: 'public' }]);
    assert.deepEqual(await found(25, '&view_as=viewer'), [], 'the private road is not found');
    assert.deepEqual(await found(25, ''), [{ fid: 2, kind: 'private', owner: 'bob' }]);
    assert.deepEqual(await (await get('/layers?view_as=viewer')).json(), ['roads']);
    assert.deepEqual(((await (await get('/layers?view_as=viewer,reader')).json()) as string[]).sort(), [
      'roads',
      'secret',
    ]);
    const legend = await get('/layers/roads/legend?view_as=viewer');
    assert.equal(legend.headers.get('content-type'), 'image/png');
    const refusals: Array<[string, string | undefined, number, RegExp]> = [
      [`/wms?layers=roads,secret&${view}&view_as=viewer`, ADMIN, 404, /viewed as viewer: .*secret/],
      ['/layers/secret/legend?view_as=viewer', ADMIN, 404, /viewed as viewer: .*secret/],
      [`/wms?layers=roads&${view}&view_as=nobody`, ADMIN, 422, /role "nobody" does not exist/],
      [`/wms?layers=roads&${view}&view_as=,`, ADMIN, 422, /view_as names no role/],
      [`/wms?layers=roads&${view}&view_as=reader`, tokens['viewer'], 403, /view_as is for administrators/],
      ['/layers?view_as=reader', tokens['reader'], 403, /view_as is for administrators/],
      ['/tree?view_as=viewer', ADMIN, 400, /view_as is taken by the reads of a project's map/],
    ];
    for (const [path, token, status, message] of refusals) {
      const response = await get(path, token);
      assert.equal(response.status, status, path);
      assert.match(((await response.json()) as { error: string }).error, message, path);
    }
  });

  it('applies a changed role at the next request', async () => {
    const changed = {
      ...VIEWER_ROLE,
      projects: { town: { access: 'read', layers: { roads: { filter: `"owner" = 'ann'` } } } },
    };
    assert.equal((await admin('PUT', '/api/roles/viewer', changed)).status, 200);
    await until('the new filter applied', async () => (await features('viewer', 'roads')).length === 1);
    const viewer = await text('viewer', 'SERVICE=WMS&REQUEST=GetCapabilities');
    assert.match(viewer, /<Name>secret<\/Name>/);
  });

  it('refuses WFS-T to a role that may not edit, and lets an editor insert', async () => {
    const insert = (who: string) =>
      ows(who, 'SERVICE=WFS&VERSION=1.1.0&REQUEST=Transaction', {
        method: 'POST',
        headers: { 'content-type': 'text/xml' },
        body: transaction(),
      });
    assert.equal((await insert('viewer')).status, 403, 'WFS-T is refused to the viewer');
    const reader = await insert('reader');
    assert.doesNotMatch(reader.body.toString(), /<totalInserted>1<\/totalInserted>/);
    const editor = await insert('editor');
    assert.match(editor.body.toString(), /<totalInserted>1<\/totalInserted>/, editor.body.toString().slice(0, 500));
  });
});

/** A WFS 1.1.0 insert of one public road at (3,3). */
function transaction(): string {
  return `<wfs:Transaction service="WFS" version="1.1.0" xmlns:wfs="http://www.opengis.net/wfs"
 xmlns:gml="http://www.opengis.net/gml" xmlns:qgs="http://www.qgis.org/gml">
 <wfs:Insert><qgs:roads><qgs:geometry><gml:Polygon srsName="EPSG:4326"><gml:exterior><gml:LinearRing>
 <gml:posList srsDimension="2">3 3 3 4 4 4 4 3 3 3</gml:posList></gml:LinearRing></gml:exterior></gml:Polygon>
 </qgs:geometry><qgs:kind>public</qgs:kind><qgs:owner>eve</qgs:owner></qgs:roads></wfs:Insert></wfs:Transaction>`;
}
