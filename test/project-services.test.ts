import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { DOMParser } from '@xmldom/xmldom';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { ows } from './support/qgis.js';
import { type Stack, startStack } from './support/stack.js';

const PROJECT = 'published';
const SERVICES = `/api/projects/${PROJECT}/services`;

const SETTINGS = {
  title: 'Regional data',
  abstract: 'Parcels and imagery',
  keywords: ['parcels', 'imagery'],
  online_resource: 'https://maps.example.org/',
  fees: 'none',
  access_constraints: 'Licence Ouverte 2.0',
  advertised: true,
  contact: {
    person: 'Ada Lovelace',
    organization: 'Survey & Co',
    position: 'pointOfContact',
    mail: 'ada@example.org',
    phone: '+33 1 23 45 67 89',
  },
  wms: {
    crs: ['EPSG:4326', 'EPSG:3857', 'epsg:2154'],
    extent: [0, 43, 4, 47],
    max_width: 4000,
    max_height: 3000,
    image_quality: 85,
    feature_info: { geometry: true, precision: 4 },
  },
  wfs: { layers: ['polygons', 'points'], precision: { polygons: 3 }, insert: ['points'], update: ['points'] },
  wcs: { layers: ['rgb'] },
  wmts: {
    layers: ['polygons', 'rgb'],
    formats: { rgb: ['image/jpeg'] },
    grids: [
      { crs: 'EPSG:3857', last_level: 5 },
      { crs: 'epsg:2154', top: 7230727.377, left: -357823.236, scale_denominator: 8000000, last_level: 3 },
    ],
  },
};

function parse(text: string): Document {
  return new DOMParser().parseFromString(text, 'text/xml') as unknown as Document;
}

/** The texts of the elements named `name` (any prefix), in document order. */
function texts(document: Document, name: string): string[] {
  const all = Array.from(document.getElementsByTagName('*') as unknown as Element[]);
  return all.filter((node) => node.localName === name).map((node) => node.textContent?.trim() ?? '');
}

/** The element's children named `name` (any prefix). */
function children(element: Element, name: string): Element[] {
  return Array.from(element.childNodes).filter((node) => (node as Element).localName === name) as Element[];
}

/** The TileMatrixSets a WMTS capabilities document defines (not the layers' links to them). */
function contentSets(document: Document): Element[] {
  return Array.from(document.getElementsByTagName('TileMatrixSet') as unknown as Element[]).filter(
    (set) => (set.parentNode as Element | null)?.localName === 'Contents',
  );
}

/** Each TileMatrixSet's identifier and number of TileMatrix (levels). */
function tileMatrixSets(document: Document): Array<[string | null | undefined, number]> {
  return contentSets(document).map((set) => [
    children(set, 'Identifier')[0]?.textContent,
    children(set, 'TileMatrix').length,
  ]);
}

describe('service settings through the API, as QGIS Server publishes them', () => {
  let stack: Stack;
  let data: Fixtures;
  let map: string;

  const capabilities = async (service: string, version: string): Promise<Document> => {
    const response = await ows(stack.qgis, map, { SERVICE: service, VERSION: version, REQUEST: 'GetCapabilities' });
    const body = await response.text();
    assert.equal(response.status, 200, body.slice(0, 300));
    return parse(body);
  };

  before(async () => {
    data = makeFixtures();
    stack = await startStack();
    assert.equal((await stack.call('POST', '/api/projects/', { name: PROJECT, author: 'test' })).status, 201);
    for (const [name, layer] of [
      ['rgb', { type: 'raster', datasource: data.rgbTiff }],
      ['polygons', { type: 'vector', datasource: `${data.geopackage}|layername=polygons` }],
      ['points', { type: 'vector', datasource: `${data.geopackage}|layername=points` }],
    ] as const) {
      const reply = await stack.call('POST', `/api/projects/${PROJECT}/layers`, { name, ...layer });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
    }
    map =
      stack.storage.kind === 'filesystem'
        ? join(stack.projectsDir, PROJECT, `${PROJECT}.qgs`)
        : `postgresql:?service=${stack.storage.config.psqlService}&schema=public&project=${PROJECT}`;
  });
  after(async () => {
    await stack?.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('starts with nothing published but WMS, as QGIS Server tells', async () => {
    const reply = await stack.call('GET', SERVICES);
    assert.equal(reply.status, 200);
    const settings = reply.body as Record<string, Record<string, unknown>>;
    assert.deepEqual(settings['wfs'], {
      enabled: false,
      layers: [],
      precision: {},
      insert: [],
      update: [],
      delete: [],
      url: '',
    });
    assert.deepEqual(settings['wcs'], { enabled: false, layers: [], url: '' });
    assert.deepEqual(settings['ogcapi_features'], { enabled: false, collections: [] });
    assert.deepEqual(settings['wms']?.['crs'], []);
    assert.equal(settings['wmts']?.['grids'], null, 'no grid defined: QGIS Server’s own');
    assert.deepEqual(texts(await capabilities('WFS', '1.1.0'), 'FeatureType'), []);
    // No public address set: the URLs are on the one Steward uses, and said to be.
    const endpoints = settings['endpoints'] as Record<string, string>;
    assert.equal(endpoints['address'], 'internal');
    assert.ok(endpoints['wms']?.startsWith(`${stack.qgis.url}?MAP=`), endpoints['wms']);
  });

  it('writes the settings, and answers them as written', async () => {
    const reply = await stack.call('PATCH', SERVICES, SETTINGS);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const settings = reply.body as Record<string, unknown>;
    assert.deepEqual(settings['contact'], SETTINGS.contact);
    assert.deepEqual(settings['wms'], {
      crs: ['EPSG:4326', 'EPSG:3857', 'EPSG:2154'],
      extent: [0, 43, 4, 47],
      max_width: 4000,
      max_height: 3000,
      image_quality: 85,
      feature_info: { geometry: true, segmentize: false, precision: 4, use_form_settings: false },
      use_layer_ids: false,
      url: '',
    });
    assert.deepEqual(settings['wfs'], {
      enabled: true,
      layers: ['polygons', 'points'],
      precision: { polygons: 3 },
      insert: ['points'],
      update: ['points'],
      delete: [],
      url: '',
    });
    assert.deepEqual(settings['wmts'], {
      enabled: true,
      project: false,
      groups: [],
      layers: ['polygons', 'rgb'],
      formats: { polygons: ['image/png', 'image/jpeg'], rgb: ['image/jpeg'] },
      grids: [
        {
          crs: 'EPSG:3857',
          top: 20037508.342789248,
          left: -20037508.342789248,
          scale_denominator: 559082264.0287179,
          last_level: 5,
        },
        { crs: 'EPSG:2154', top: 7230727.377, left: -357823.236, scale_denominator: 8000000, last_level: 3 },
      ],
      url: '',
    });
    assert.deepEqual(settings['ogcapi_features'], { enabled: true, collections: ['polygons', 'points'] });
    assert.deepEqual((await stack.call('GET', SERVICES)).body, settings);
    const xml = await stack.storage.projectXml(PROJECT);
    assert.match(xml, /<WMSMaxWidth type="int">4000<\/WMSMaxWidth>/);
    assert.match(xml, /<WMSServiceCapabilities type="bool">true<\/WMSServiceCapabilities>/);
    assert.match(xml, /<WMSContactOrganization type="QString">Survey &amp; Co<\/WMSContactOrganization>/);
  });

  it('shows in WMS GetCapabilities: the CRSs, contact, fees and size limits', async () => {
    const document = await capabilities('WMS', '1.3.0');
    const root = Array.from(document.getElementsByTagName('Layer') as unknown as Element[])[0];
    const rootCrs = Array.from(root?.childNodes ?? [])
      .filter((node) => node.nodeName === 'CRS')
      .map((node) => node.textContent);
    // QGIS Server adds CRS:84 to WMS 1.3.0's list of its own.
    assert.deepEqual(rootCrs, ['CRS:84', 'EPSG:4326', 'EPSG:3857', 'EPSG:2154']);
    assert.deepEqual(texts(document, 'ContactPerson'), ['Ada Lovelace']);
    assert.deepEqual(texts(document, 'ContactOrganization'), ['Survey & Co']);
    assert.deepEqual(texts(document, 'ContactElectronicMailAddress'), ['ada@example.org']);
    assert.deepEqual(texts(document, 'Fees'), ['none']);
    assert.deepEqual(texts(document, 'AccessConstraints'), ['Licence Ouverte 2.0']);
    assert.deepEqual(texts(document, 'MaxWidth'), ['4000']);
    assert.deepEqual(texts(document, 'MaxHeight'), ['3000']);
    assert.deepEqual(texts(document, 'Title')[0], 'Regional data');
  });

  it('refuses a GetMap larger than the maximum size, as QGIS Server does', async () => {
    const response = await ows(stack.qgis, map, {
      SERVICE: 'WMS',
      VERSION: '1.3.0',
      REQUEST: 'GetMap',
      LAYERS: 'polygons',
      CRS: 'EPSG:4326',
      BBOX: '43,0,47,4',
      WIDTH: '4001',
      HEIGHT: '10',
      FORMAT: 'image/png',
    });
    assert.match(await response.text(), /ServiceException/);
  });

  it('publishes the layers through WFS: GetCapabilities lists them and GetFeature answers features', async () => {
    const document = await capabilities('WFS', '1.1.0');
    const types = Array.from(document.getElementsByTagName('FeatureType') as unknown as Element[]).map((type) =>
      texts(type as unknown as Document, 'Name'),
    );
    assert.deepEqual(types, [['polygons'], ['points']]);
    const response = await ows(stack.qgis, map, {
      SERVICE: 'WFS',
      VERSION: '1.1.0',
      REQUEST: 'GetFeature',
      TYPENAME: 'points',
      OUTPUTFORMAT: 'application/vnd.geo+json',
    });
    const body = await response.text();
    assert.equal(response.status, 200, body.slice(0, 300));
    const features = (JSON.parse(body) as { features: Array<{ geometry: { coordinates: number[] } }> }).features;
    assert.deepEqual(
      features.map((feature) => feature.geometry.coordinates),
      [
        [1.5, 44.5],
        [2, 45],
        [2.5, 45.5],
      ],
    );
  });

  it('publishes the raster through WCS and the layers through WMTS', async () => {
    const wcs = await capabilities('WCS', '1.0.0');
    const coverages = Array.from(wcs.getElementsByTagName('CoverageOfferingBrief') as unknown as Element[]);
    assert.deepEqual(
      coverages.map((coverage) => texts(coverage as unknown as Document, 'name')),
      [['rgb']],
    );
    const wmts = await capabilities('WMTS', '1.0.0');
    const layers = Array.from(wmts.getElementsByTagName('Layer') as unknown as Element[]);
    const identifiers = layers.map((layer) =>
      Array.from(layer.childNodes)
        .filter((node) => (node as Element).localName === 'Identifier')
        .map((node) => node.textContent),
    );
    assert.deepEqual(identifiers.flat().sort(), ['polygons', 'rgb']);
    const rgb = layers.find((layer) => layer.textContent?.includes('rgb'));
    assert.deepEqual(texts(rgb as unknown as Document, 'Format'), ['image/jpeg']);
    // The grids set: one TileMatrixSet each, a TileMatrix per level from the scale and corner given.
    assert.deepEqual(tileMatrixSets(wmts), [
      ['EPSG:3857', 6],
      ['EPSG:2154', 4],
    ]);
    const lambert = children(contentSets(wmts)[1] as Element, 'TileMatrix');
    assert.deepEqual(
      lambert.map((matrix) => Number(texts(matrix as unknown as Document, 'ScaleDenominator')[0])),
      [8000000, 4000000, 2000000, 1000000],
    );
    const corner = texts(lambert[0] as unknown as Document, 'TopLeftCorner')[0]
      ?.split(' ')
      .map(Number);
    assert.deepEqual(corner, [-357823.236, 7230727.377]);
  });

  it('reads back the grids QGIS wrote, as Desktop formats their numbers, and QGIS Server publishes them', async () => {
    const scratch = mkdtempSync(join(data.dir, 'desktop-'));
    const source = join(scratch, 'source.qgs');
    writeFileSync(source, await stack.storage.projectXml(PROJECT));
    const written = join(scratch, 'desktop.qgs');
    const grids = [
      { crs: 'EPSG:2154', top: 7230727.377, left: -357823.236, scale_denominator: 8000000, last_level: 2 },
      { crs: 'EPSG:4326', top: 90, left: -180, scale_denominator: 279541132.0143589, last_level: 4 },
    ];
    runPyqgisScript(
      'edit_project.py',
      source,
      written,
      'set-services',
      JSON.stringify({ wmts: { layers: ['rgb'], grids } }),
    );
    // Desktop writes 8000000 as "8e+06" and 90 as "90".
    assert.match(readFileSync(written, 'utf8'), /<value>EPSG:2154,7230727\.377,-357823\.236,8e\+06,2<\/value>/);
    const published = await fetch(`${stack.api.url}/api/projects/desktop/archive`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: readFileSync(written),
    });
    assert.equal(published.status, 201, await published.text());

    const reply = await stack.call('GET', '/api/projects/desktop/services');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const { wmts } = reply.body as { wmts: { layers: string[]; grids: unknown[] } };
    assert.deepEqual([wmts.layers, wmts.grids], [['rgb'], grids]);
    const desktopMap =
      stack.storage.kind === 'filesystem'
        ? join(stack.projectsDir, 'desktop', 'desktop.qgs')
        : map.replace(`project=${PROJECT}`, 'project=desktop');
    const response = await ows(stack.qgis, desktopMap, {
      SERVICE: 'WMTS',
      VERSION: '1.0.0',
      REQUEST: 'GetCapabilities',
    });
    const document = parse(await response.text());
    assert.deepEqual(tileMatrixSets(document), [
      ['EPSG:2154', 3],
      ['EPSG:4326', 5],
    ]);
  });

  it('tells an empty grid list, as Desktop saves no grid ticked, from none defined, as QGIS Server does', async () => {
    const scratch = mkdtempSync(join(data.dir, 'no-grid-'));
    const source = join(scratch, 'source.qgs');
    writeFileSync(source, await stack.storage.projectXml(PROJECT));
    const written = join(scratch, 'no-grid.qgs');
    const desktop = JSON.stringify({ wmts: { layers: ['rgb'], grids: [] } });
    runPyqgisScript('edit_project.py', source, written, 'set-services', desktop);
    const emptyList = /<WMTSGrids>\s*<CRS type="QStringList"\/>\s*<Config type="QStringList"\/>\s*<\/WMTSGrids>/;
    assert.match(readFileSync(written, 'utf8'), emptyList);
    const published = await fetch(`${stack.api.url}/api/projects/no-grid/archive`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: readFileSync(written),
    });
    assert.equal(published.status, 201, await published.text());
    const noGridMap =
      stack.storage.kind === 'filesystem'
        ? join(stack.projectsDir, 'no-grid', 'no-grid.qgs')
        : map.replace(`project=${PROJECT}`, 'project=no-grid');
    const matrixSets = async (): Promise<Array<string | null | undefined>> => {
      const query = { SERVICE: 'WMTS', VERSION: '1.0.0', REQUEST: 'GetCapabilities' };
      const document = parse(await (await ows(stack.qgis, noGridMap, query)).text());
      return tileMatrixSets(document).map(([crs]) => crs);
    };
    const path = '/api/projects/no-grid/services';
    const gridsNow = async (): Promise<unknown> =>
      ((await stack.call('GET', path)).body as { wmts: { grids: unknown } }).wmts.grids;

    assert.deepEqual(await gridsNow(), []);
    assert.deepEqual(await matrixSets(), [], 'QGIS Server publishes no TileMatrixSet');
    const own = await stack.call('PATCH', path, { wmts: { grids: null } });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal(await gridsNow(), null);
    // QgsProject::removeEntry leaves the key's parent, empty: `<WMTSGrids/>`.
    assert.match(await stack.storage.projectXml('no-grid'), /<WMTSGrids\/>/);
    assert.ok((await matrixSets()).includes('EPSG:3857'), 'QGIS Server’s own grids, one per WMS CRS');
    const none = await stack.call('PATCH', path, { wmts: { grids: [] } });
    assert.equal(none.status, 200, JSON.stringify(none.body));
    assert.deepEqual(await gridsNow(), []);
    assert.match(await stack.storage.projectXml('no-grid'), emptyList, 'written as Desktop writes it');
    assert.deepEqual(await matrixSets(), []);
  });

  it('serves the WFS layers as OGC API Features collections', async () => {
    const url = new URL('wfs3/collections.json', stack.qgis.url);
    url.searchParams.set('MAP', map);
    const response = await fetch(url);
    const body = await response.text();
    assert.equal(response.status, 200, body.slice(0, 300));
    const collections = (JSON.parse(body) as { collections: Array<{ id: string }> }).collections;
    assert.deepEqual(collections.map((collection) => collection.id).sort(), ['points', 'polygons']);
  });

  it('unpublishes: WFS off takes the transactions with it', async () => {
    const reply = await stack.call('PATCH', SERVICES, { wfs: { enabled: false }, wms: { crs: [], max_width: null } });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const settings = reply.body as { wfs: Record<string, unknown>; wms: Record<string, unknown> };
    assert.deepEqual([settings.wfs['layers'], settings.wfs['insert'], settings.wfs['update']], [[], [], []]);
    assert.deepEqual([settings.wms['crs'], settings.wms['max_width']], [[], null]);
    assert.deepEqual(texts(await capabilities('WFS', '1.1.0'), 'FeatureType'), []);
    const xml = await stack.storage.projectXml(PROJECT);
    assert.doesNotMatch(xml, /WMSMaxWidth|WMSCrsList/);
  });

  it('refuses what it cannot write with the client error, leaving the project as it was', async () => {
    const before = await stack.storage.projectXml(PROJECT);
    const refused: Array<[unknown, number, RegExp]> = [
      [{ wfs: { layers: ['nowhere'] } }, 422, /no layer "nowhere"/],
      [{ wfs: { layers: ['rgb'] } }, 422, /raster layer/],
      [{ wcs: { layers: ['points'] } }, 422, /vector layer/],
      [{ wfs: { layers: ['points'], delete: ['polygons'] } }, 422, /polygons not published/],
      [{ wmts: { groups: ['nogroup'] } }, 422, /no group nogroup/],
      [{ wms: { crs: ['EPSG:999999'] } }, 422, /not a known EPSG code/],
      [{ wmts: { grids: [{ crs: 'EPSG:2154', last_level: 3 }] } }, 422, /EPSG:2154 needs its top/],
      [
        {
          wmts: {
            grids: [
              { crs: 'EPSG:3857', last_level: 1 },
              { crs: 'epsg:3857', last_level: 2 },
            ],
          },
        },
        422,
        /one grid per CRS/,
      ],
      [{ wmts: { grids: [{ crs: 'EPSG:3857', last_level: 31 }] } }, 400, /last_level/],
      [{ wms: { crs: ['WGS84'] } }, 422, /not a known EPSG code/],
      [{ wms: { max_width: -1 } }, 400, /max_width/],
      [{ wms: { image_quality: 101 } }, 400, /image_quality/],
      [{ wms: { extent: [4, 43, 0, 47] } }, 400, /xmin < xmax/],
      [{ wfs: { url: 'http://' } }, 400, /wfs url must be an http:\/\/ or https:\/\/ URL, or empty/],
      [{ wms: { url: 'ftp://maps.example.org/ows/' } }, 400, /wms url must be/],
      [{ wms: { nonsense: 1 } }, 400, /additional/],
      [{}, 400, /fewer than 1/],
    ];
    for (const [body, status, message] of refused) {
      const reply = await stack.call('PATCH', SERVICES, body);
      assert.equal(reply.status, status, JSON.stringify([body, reply.body]));
      assert.match((reply.body as { error: string }).error, message, JSON.stringify(body));
    }
    assert.equal(await stack.storage.projectXml(PROJECT), before);
    assert.equal((await stack.call('GET', '/api/projects/nowhere/services')).status, 404);
    assert.equal((await stack.call('PATCH', '/api/projects/nowhere/services', { fees: 'x' })).status, 404);
  });
});
