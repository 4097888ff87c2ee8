import assert from 'node:assert/strict';

import { identityOf } from '../../test/support/identities.js';
import { describe, it } from '../../test/support/node-test.js';
import { type RoleDefinition } from '../access/records.js';
import { type Identity } from '../access/service.js';
import { StewardError } from '../errors.js';
import { type ProjectRef } from '../storage/project-ref.js';
import {
  type CachedProjects,
  capabilitiesListing,
  CapabilitiesToFilter,
  tileRequest,
  tilesAuthAnswer,
} from './tiles-access.js';

const TILE = '/GLOBAL_WEBMERCATOR/8/129/92.png';

/** The projects `town` (layers roads, secret, parcels) and `other` (layer roads), each its own app. */
const cache: CachedProjects = {
  projectsOfApp: async (app) => (['town', 'other'].includes(app) ? [{ name: app, schema: 'public' }] : []),
  layerNames: async (ref: ProjectRef) => (ref.name === 'town' ? ['roads', 'secret', 'parcels'] : ['roads']),
};

const viewer: RoleDefinition = {
  projects: {
    town: {
      access: 'read',
      layers: {
        secret: { read: false },
        parcels: { filter: `"owner" = @steward_user` },
        roads: {},
      },
    },
    other: { access: 'read', layers: { roads: { hidden_attributes: ['phone'] } } },
  },
};

/** The status and message `identity`'s request `uri` is refused with; 204 when allowed. */
async function judged(uri: string, who: Identity | undefined): Promise<{ status: number; message: string }> {
  try {
    await tilesAuthAnswer(who, uri, cache);
    return { status: 204, message: '' };
  } catch (error) {
    assert.ok(error instanceof StewardError, String(error));
    return { status: error.status, message: error.clientMessage };
  }
}

describe('a request to MapProxy as MapProxy routes it', () => {
  it('finds the app, and the layers a tile, map, legend or feature info names', () => {
    const tile = tileRequest(`/town/wmts/roads${TILE}`);
    assert.equal(tile.app, 'town');
    assert.ok(tile.namedOnly);
    assert.ok(tile.names.has('roads'));
    assert.ok(tileRequest(`/town/tms/1.0.0/roads${TILE}`).namedOnly);
    assert.ok(tileRequest(`/town/tiles/roads${TILE}`).namedOnly);
    assert.ok(
      tileRequest('/town/wmts/roads/GLOBAL_WEBMERCATOR/8/129/92/10/20.html').namedOnly,
      'a RESTful feature info',
    );
    const map = tileRequest('/town/service?SERVICE=WMS&REQUEST=GetMap&LAYERS=roads,parcels&layers=x');
    assert.ok(map.namedOnly);
    for (const name of ['roads', 'parcels', 'x', 'roads,parcels,x']) assert.ok(map.names.has(name), name);
    assert.ok(tileRequest('/town/wms?request=getlegendgraphic&layer=roads').names.has('roads'));
    assert.ok(tileRequest('/town/ows?request=GetFeatureInfo&query_layers=secret').names.has('secret'));
  });

  it('reads the path as MapProxy does: percent-decoded byte by byte, without query or fragment, slashes in front dropped', () => {
    assert.equal(tileRequest('//town/wmts').app, 'town');
    assert.equal(tileRequest('/t%6Fwn/wmts').app, 'town');
    assert.equal(tileRequest('/town%2Fwmts/roads').app, 'town', '%2F is a slash to MapProxy');
    assert.equal(tileRequest('/%C3%A9/wmts').app, '\u00c3\u00a9', 'each byte a character, as PEP 3333 has it');
    assert.equal(tileRequest('/town?x=/other').app, 'town');
    assert.ok(tileRequest(`/town/wmts/%73ecret${TILE}`).names.has('secret'));
    const fragment = tileRequest(`/town/wmts/1.0.0/WMTSCapabilities.xml#/roads${TILE}`);
    assert.equal(fragment.namedOnly, false, 'the fragment is no part of the path MapProxy routes');
  });

  it('takes anything else for a request that may show every layer', () => {
    for (const uri of [
      '/town/',
      '/town',
      '/town/demo/',
      '/town/demo/?wmts_layer=roads',
      '/town/wmts/1.0.0/WMTSCapabilities.xml',
      '/town/tms/1.0.0/',
      '/town/tms/1.0.0/1.0.0',
      '/town/tms/1.0.0/%0A',
      '/town/service?REQUEST=GetCapabilities',
      '/town/service?REQUEST=GetMap&REQUEST=GetCapabilities&LAYERS=roads',
      '/town/wmts/1.0.0/WMTSCapabilities.xml?REQUEST=GetTile&LAYER=roads',
      `/town/tms.x/1.0.0?REQUEST=GetMap`,
      `/town/demo${TILE}`,
    ]) {
      assert.equal(tileRequest(uri).namedOnly, false, uri);
    }
  });

  it("takes a TMS layer's document for one showing only the layer it names, as MapProxy matches its path", () => {
    for (const uri of [
      '/town/tms/1.0.0/roads/GLOBAL_WEBMERCATOR',
      '/town/tms/1.0.0/roads',
      '/town/tms/x/1.0.0/roads/GLOBAL_WEBMERCATOR',
      '/town/tms/1.0.0/1.0.0/roads',
    ]) {
      assert.ok(tileRequest(uri).namedOnly, uri);
    }
    // The service's list to MapProxy, whose `.*/1\.0\.0` takes the last `/1.0.0`, and whose `$` a final line break.
    assert.equal(tileRequest('/town/tms/1.0.0/roads/1.0.0').namedOnly, false);
    assert.equal(tileRequest('/town/tms/1.0.0/%0A').namedOnly, false);
  });

  it('finds the capabilities documents, and the request asking MapProxy for that document alone', () => {
    const cases: Array<[string, string]> = [
      ['/town/wmts/1.0.0/WMTSCapabilities.xml', '/town/wmts/1.0.0/WMTSCapabilities.xml'],
      ['/town/wmts/1.0.0/WMTSCapabilities.xml?LAYER=roads', '/town/wmts/1.0.0/WMTSCapabilities.xml'],
      ['//town/tms/1.0.0', '/town/tms/1.0.0/'],
      ['/town/tms/1.0.0/', '/town/tms/1.0.0/'],
      [
        '/town/service?SERVICE=WMTS&REQUEST=GetCapabilities&LAYER=x',
        '/town/service?SERVICE=WMTS&REQUEST=GetCapabilities',
      ],
      ['/town/ows?service=wmts&request=getcapabilities', '/town/ows?SERVICE=WMTS&REQUEST=GetCapabilities'],
      ['/town/wms?REQUEST=GetCapabilities', '/town/wms?SERVICE=WMS&REQUEST=GetCapabilities'],
      [
        '/town/service?REQUEST=GetCapabilities&VERSION=1.1.1&tiled=true&FORMAT=x',
        '/town/service?SERVICE=WMS&REQUEST=GetCapabilities&VERSION=1.1.1&TILED=true',
      ],
      ['/town/service?REQUEST=GetCapabilities&VERSION=1.3.0%26X', '/town/service?SERVICE=WMS&REQUEST=GetCapabilities'],
      ['/t%C3%A9%20x/wmts/1.0.0/WMTSCapabilities.xml', '/t%C3%A9%20x/wmts/1.0.0/WMTSCapabilities.xml'],
    ];
    for (const [uri, path] of cases) assert.equal(tileRequest(uri).capabilities, path, uri);
    for (const uri of [
      '/town/',
      '/town/demo/',
      '/town/demo/?REQUEST=GetCapabilities',
      '/town/wmts/roads/1.0.0/WMTSCapabilities.xml',
      '/town/tms/1.0.0/roads/GLOBAL_WEBMERCATOR',
      '/town/tms/x/1.0.0/',
      '/town/service/x?REQUEST=GetCapabilities',
      '/town/service?REQUEST=GetMap&REQUEST=GetCapabilities',
      '/town/service?SERVICE=WMS&SERVICE=WMTS&REQUEST=GetCapabilities',
      '/town/service?SERVICE=WFS&REQUEST=GetCapabilities',
      `/town/wmts/roads${TILE}`,
      '/town/service?REQUEST=GetMap&LAYERS=roads',
    ]) {
      assert.equal(tileRequest(uri).capabilities, undefined, uri);
    }
  });
});

describe("the tile cache's judgement", () => {
  it('serves a layer readable whole, and refuses hidden, filtered and attribute-hidden ones', async () => {
    const ann = identityOf({ viewer });
    assert.equal((await judged(`/town/wmts/roads${TILE}`, ann)).status, 204);
    assert.equal((await judged('/town/service?REQUEST=GetMap&LAYERS=roads', ann)).status, 204);
    const hidden = await judged(`/town/tms/1.0.0/secret${TILE}`, ann);
    assert.deepEqual(hidden, { status: 403, message: 'layer "secret" is hidden from this identity' });
    assert.match((await judged(`/town/wmts/parcels${TILE}`, ann)).message, /"parcels" is filtered for this identity/);
    assert.match((await judged(`/other/wmts/roads${TILE}`, ann)).message, /"roads" has attributes hidden/);
    assert.equal((await judged('/town/service?REQUEST=GetMap&LAYERS=roads&LAYERS=secret', ann)).status, 403);
    assert.equal((await judged('/town/wms?REQUEST=GetMap&LAYERS=roads,parcels', ann)).status, 403);
  });

  it('refuses capabilities and pages of a project with a layer not readable whole, and the list of apps', async () => {
    const ann = identityOf({ viewer });
    for (const uri of ['/town/wmts/1.0.0/WMTSCapabilities.xml', '/town/demo/', '/town/', '/town/tms/1.0.0/']) {
      assert.match((await judged(uri, ann)).message, /project "town" has layers this identity may not read whole/, uri);
    }
    assert.equal((await judged('/town/tms/1.0.0/roads/GLOBAL_WEBMERCATOR', ann)).status, 204, "a layer's TMS document");
    assert.match((await judged('/town/tms/1.0.0/secret/GLOBAL_WEBMERCATOR', ann)).message, /"secret" is hidden/);
    const whole = identityOf({
      whole: { projects: { town: { access: 'read', layers: { elsewhere: { read: false } } } } },
    });
    assert.equal(
      (await judged('/town/wmts/1.0.0/WMTSCapabilities.xml', whole)).status,
      204,
      'a rule on no layer of the cache',
    );
    assert.deepEqual(await judged('/', whole), {
      status: 403,
      message: "the list of the tile cache's projects is for administrators",
    });
  });

  it('refuses projects one may not read, 401 to the anonymous role as QGIS Server does', async () => {
    const stranger = identityOf({ stranger: { projects: { other: { access: 'read' } } } });
    assert.match(
      (await judged(`/town/wmts/roads${TILE}`, stranger)).message,
      /"town" names no project this identity may read/,
    );
    assert.equal((await judged(`/nowhere/wmts/roads${TILE}`, stranger)).status, 403);
    const anonymous = await judged(`/town/wmts/roads${TILE}`, identityOf({}, { kind: 'anonymous' }));
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.message, /^the tile cache needs Authorization: Bearer <token>/);
  });

  it("refuses the services a role's rules refuse, whichever way MapProxy is asked", async () => {
    const limited = (services: RoleDefinition['services']) =>
      identityOf({ limited: { projects: { town: { access: 'read' } }, services } });
    const noTiles = limited({ WMTS: false });
    for (const uri of [
      `/town/wmts/roads${TILE}`,
      `/town/tms/1.0.0/roads/GLOBAL_WEBMERCATOR/8/129/92.png`,
      `/town/tiles/roads/GLOBAL_WEBMERCATOR/8/129/92.png`,
      `/town/kml/roads/8/129/92.kml`,
      '/town/service?SERVICE=WMTS&REQUEST=GetTile&LAYER=roads',
      '/town/service?service=wms&SERVICE=wmts&REQUEST=GetTile&LAYER=roads',
    ]) {
      assert.deepEqual(await judged(uri, noTiles), { status: 403, message: 'WMTS is refused to this identity' }, uri);
    }
    assert.equal((await judged('/town/service?REQUEST=GetMap&LAYERS=roads', noTiles)).status, 204);
    const noMaps = limited({ WMS: false });
    for (const uri of [
      '/town/service?REQUEST=GetMap&LAYERS=roads',
      '/town/wms?SERVICE=WMS&REQUEST=GetMap&LAYERS=roads',
    ])
      assert.equal((await judged(uri, noMaps)).message, 'WMS is refused to this identity', uri);
    assert.equal((await judged(`/town/wmts/roads${TILE}`, noMaps)).status, 204);
    const noInfo = limited({ GetFeatureInfo: false });
    for (const uri of [
      '/town/service?REQUEST=GetFeatureInfo&QUERY_LAYERS=roads&LAYERS=roads',
      '/town/service?REQUEST=GetMap&request=GetFeatureInfo&LAYERS=roads',
      '/town/wmts/roads/GLOBAL_WEBMERCATOR/8/129/92/10/20.html',
    ]) {
      assert.equal((await judged(uri, noInfo)).message, 'GetFeatureInfo is refused to this identity', uri);
    }
    assert.equal((await judged(`/town/wmts/roads${TILE}`, noInfo)).status, 204);
  });

  it('marks the refusal of a capabilities document, and of nothing else, for nginx to ask it listed by layer', async () => {
    const refusal = async (uri: string, who: Identity): Promise<unknown> =>
      tilesAuthAnswer(who, uri, cache).then(
        () => undefined,
        (error: unknown) => error,
      );
    const anonymous = identityOf(
      { public: { projects: { town: { access: 'read', layers: { secret: { read: false } } } } } },
      {
        kind: 'anonymous',
      },
    );
    for (const who of [identityOf({ viewer }), anonymous]) {
      for (const uri of [
        '/town/wmts/1.0.0/WMTSCapabilities.xml',
        '/town/tms/1.0.0/',
        '/town/service?SERVICE=WMTS&REQUEST=GetCapabilities',
        '/town/wms?REQUEST=GetCapabilities',
      ]) {
        assert.ok((await refusal(uri, who)) instanceof CapabilitiesToFilter, uri);
      }
      for (const uri of ['/town/demo/', '/town/', '/town/service?SERVICE=WMS&REQUEST=GetCapabilities&LAYERS=secret']) {
        const error = await refusal(uri, who);
        assert.ok(error instanceof StewardError && !(error instanceof CapabilitiesToFilter), uri);
      }
    }
    const stranger = identityOf({ stranger: { projects: { other: { access: 'read' } } } });
    assert.ok(!((await refusal('/town/wmts/1.0.0/WMTSCapabilities.xml', stranger)) instanceof CapabilitiesToFilter));
  });

  it('lists in capabilities the layers readable whole, judged again, and serves nothing but capabilities', async () => {
    const listing = await capabilitiesListing(
      identityOf({ viewer }),
      '/town/service?REQUEST=GetCapabilities&LAYERS=roads',
      cache,
    );
    assert.equal(listing.path, '/town/service?SERVICE=WMS&REQUEST=GetCapabilities');
    assert.deepEqual(
      ['roads', 'secret', 'parcels', 'elsewhere'].filter((layer) => listing.listed(layer)),
      ['roads'],
      'neither hidden, filtered, nor a layer the configuration does not have',
    );
    const other = await capabilitiesListing(identityOf({ viewer }), '/other/tms/1.0.0/', cache);
    assert.equal(other.listed('roads'), false, 'attributes hidden');
    const refusedWith = (uri: string, who: Identity) =>
      capabilitiesListing(who, uri, cache).then(
        () => '',
        (error: unknown) => (error instanceof StewardError ? `${error.status} ${error.clientMessage}` : String(error)),
      );
    const ann = identityOf({ viewer });
    for (const uri of [
      `/town/wmts/roads${TILE}`,
      '/town/demo/',
      '/town/',
      '/town/tms/1.0.0/roads/GLOBAL_WEBMERCATOR',
    ]) {
      assert.match(await refusedWith(uri, ann), /^403 only the tile cache's capabilities documents/, uri);
    }
    assert.match(await refusedWith('/town/wmts/1.0.0/WMTSCapabilities.xml?LAYER=secret', ann), /"secret" is hidden/);
    const stranger = identityOf({ stranger: { projects: { other: { access: 'read' } } } });
    assert.match(await refusedWith('/town/tms/1.0.0/', stranger), /names no project this identity may read/);
    const noTiles = identityOf({ limited: { projects: { town: { access: 'read' } }, services: { WMTS: false } } });
    assert.match(await refusedWith('/town/wmts/1.0.0/WMTSCapabilities.xml', noTiles), /WMTS is refused/);
    assert.match(await refusedWith('/', ann), /is for administrators/);
    const admin = await capabilitiesListing(
      identityOf({}, { kind: 'bootstrap', admin: true }),
      '/town/tms/1.0.0',
      cache,
    );
    assert.ok(admin.listed('secret'));
  });

  it('serves administrators, the tile cache token and anyone without access control everything', async () => {
    for (const who of [
      identityOf({}, { kind: 'bootstrap', admin: true }),
      identityOf({ tiles: { projects: { '*': { access: 'read' } } } }, { kind: 'tile-cache' }),
      undefined,
    ]) {
      for (const uri of ['/', `/town/wmts/secret${TILE}`, '/town/demo/', '/nowhere/']) {
        assert.equal((await judged(uri, who)).status, 204, `${who?.kind ?? 'open'} ${uri}`);
      }
    }
  });
});
