import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { DOMParser } from '@xmldom/xmldom';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { ows } from './support/qgis.js';
import { type Stack, startStack } from './support/stack.js';

const PROJECT = 'props';
const XLINK = 'http://www.w3.org/1999/xlink';

function children(node: Element, name: string): Element[] {
  return Array.from(node.childNodes).filter((child): child is Element => child.nodeName === name);
}

function childText(node: Element, name: string): string {
  return children(node, name)[0]?.textContent ?? '';
}

function href(node: Element | undefined): string {
  const resource = node && children(node, 'OnlineResource')[0];
  return resource?.getAttributeNS(XLINK, 'href') ?? '';
}

describe("a layer's properties through the API, as QGIS Server publishes them", () => {
  let stack: Stack;
  let data: Fixtures;
  let file: string;
  const layerUrl = (layer: string) => `/api/projects/${PROJECT}/layers/${layer}`;

  /** The WMS 1.3.0 capabilities' layers by their published name. */
  const capabilities = async (): Promise<Map<string, Element>> => {
    const response = await ows(stack.qgis, file, { SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' });
    assert.equal(response.status, 200);
    const document = new DOMParser().parseFromString(await response.text(), 'text/xml');
    const layers = Array.from(document.getElementsByTagName('Layer') as unknown as Element[]).slice(1);
    return new Map(layers.map((layer) => [childText(layer, 'Name'), layer]));
  };

  const getMap = async (layers: string): Promise<Image> => {
    const response = await ows(stack.qgis, file, {
      SERVICE: 'WMS',
      VERSION: '1.3.0',
      REQUEST: 'GetMap',
      LAYERS: layers,
      STYLES: '',
      CRS: 'EPSG:4326',
      BBOX: '43,0,47,4',
      WIDTH: '100',
      HEIGHT: '100',
      FORMAT: 'image/png',
      TRANSPARENT: 'TRUE',
    });
    const body = Buffer.from(await response.arrayBuffer());
    assert.match(response.headers.get('content-type') ?? '', /^image\/png/, body.toString('utf8').slice(0, 300));
    return decodePng(body);
  };

  /** The `<maplayer>` of the layer named `name` in the project file. */
  const mapLayer = (name: string): Element => {
    const document = new DOMParser().parseFromString(readFileSync(file, 'utf8'), 'text/xml');
    const layers = Array.from(document.getElementsByTagName('maplayer') as unknown as Element[]);
    const found = layers.find((layer) => childText(layer, 'layername') === name);
    assert.ok(found, `the project file has a layer ${name}`);
    return found;
  };

  before(async () => {
    data = makeFixtures();
    stack = await startStack();
    await stack.call('POST', '/api/projects/', { name: PROJECT, author: 'test' });
    for (const [name, layer] of [
      ['rgb', { type: 'raster', datasource: data.rgbTiff }],
      ['polygons', { type: 'vector', datasource: `${data.geopackage}|layername=polygons` }],
    ] as const) {
      const reply = await stack.call('POST', `/api/projects/${PROJECT}/layers`, { name, ...layer });
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
    }
    file = join(stack.projectsDir, PROJECT, `${PROJECT}.qgs`);
  });
  after(async () => {
    await stack.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('answers the properties of a new layer', async () => {
    const reply = await stack.call('GET', `${layerUrl('polygons')}/properties`);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const body = reply.body as Record<string, unknown>;
    assert.equal(body['name'], 'polygons');
    assert.equal(body['short_name'], '');
    assert.deepEqual(body['keywords'], []);
    assert.equal(body['scale_based_visibility'], false);
    assert.equal(body['opacity'], 1);
    assert.equal(body['blending'], 'normal');
    assert.equal(body['crs'], 'EPSG:4326');
  });

  it('writes what QGIS Server publishes of a layer: names, texts, URLs and scales', async () => {
    const change = {
      title: 'Parcels & plots',
      abstract: 'Land parcels <2026>',
      keywords: ['cadastre', 'parcels'],
      short_name: 'parcels',
      attribution: { title: 'Survey office', url: 'https://survey.example/' },
      data_url: { url: 'https://survey.example/parcels.gpkg', format: 'application/geopackage+sqlite3' },
      metadata_urls: [{ url: 'https://survey.example/parcels.xml', type: 'FGDC:1998', format: 'text/xml' }],
      scale_based_visibility: true,
      min_scale: 500000,
      max_scale: 1000,
    };
    const reply = await stack.call('PATCH', layerUrl('polygons'), change);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual(reply.body, { ...(reply.body as object), ...change, name: 'polygons' });
    assert.deepEqual((await stack.call('GET', `${layerUrl('polygons')}/properties`)).body, reply.body);

    const layer = (await capabilities()).get('parcels');
    assert.ok(layer, 'QGIS Server publishes the layer under its short name');
    assert.equal(childText(layer, 'Title'), 'Parcels & plots');
    assert.equal(childText(layer, 'Abstract'), 'Land parcels <2026>');
    const keywords = children(children(layer, 'KeywordList')[0] as Element, 'Keyword').map((k) => k.textContent);
    assert.deepEqual(keywords, ['cadastre', 'parcels']);
    const attribution = children(layer, 'Attribution')[0];
    assert.equal(attribution && childText(attribution, 'Title'), 'Survey office');
    assert.equal(href(attribution), 'https://survey.example/');
    const dataUrl = children(layer, 'DataURL')[0];
    assert.equal(href(dataUrl), 'https://survey.example/parcels.gpkg');
    assert.equal(dataUrl && childText(dataUrl, 'Format'), 'application/geopackage+sqlite3');
    const metadataUrl = children(layer, 'MetadataURL')[0];
    assert.equal(metadataUrl?.getAttribute('type'), 'FGDC:1998');
    assert.equal(href(metadataUrl), 'https://survey.example/parcels.xml');
    assert.equal(Number(childText(layer, 'MinScaleDenominator')), 1000);
    assert.equal(Number(childText(layer, 'MaxScaleDenominator')), 500000);

    const written = mapLayer('polygons');
    assert.equal(childText(written, 'shortname'), 'parcels');
    assert.equal(written.getAttribute('hasScaleBasedVisibilityFlag'), '1');
    assert.equal(written.getAttribute('minScale'), '500000');
    assert.equal(written.getAttribute('maxScale'), '1000');
    // The rest of the layer stays as it was: its datasource and its place in the tree.
    assert.match(childText(written, 'datasource'), /layername=polygons/);
    assert.deepEqual((await stack.call('GET', `/api/projects/${PROJECT}/layers`)).body, ['rgb', 'polygons']);
  });

  it('draws a raster at the opacity set, and writes the blending as QGIS numbers it', async () => {
    const opaque = await getMap('rgb');
    assert.deepEqual(opaque.pixel(50, 50), [200, 40, 90, 255]);
    const reply = await stack.call('PATCH', layerUrl('rgb'), { opacity: 0.5, blending: 'multiply' });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal((reply.body as { opacity: number }).opacity, 0.5);
    const [, , , alpha] = (await getMap('rgb')).pixel(50, 50);
    assert.ok(Math.abs(alpha - 128) <= 1, `half transparent: alpha ${alpha}`);
    const written = mapLayer('rgb');
    assert.equal(childText(written, 'blendMode'), '6');
    const renderer = written.getElementsByTagName('rasterrenderer')[0];
    assert.equal(renderer?.getAttribute('opacity'), '0.5');
  });

  it('renames a layer in the project, its tree and what QGIS Server draws', async () => {
    const reply = await stack.call('PATCH', layerUrl('rgb'), { name: 'photo' });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal((reply.body as { name: string }).name, 'photo');
    assert.deepEqual((await stack.call('GET', `/api/projects/${PROJECT}/layers`)).body, ['photo', 'polygons']);
    const tree = (await stack.call('GET', `/api/projects/${PROJECT}/tree`)).body as { children: { name: string }[] };
    assert.deepEqual(tree.children.map((child) => child.name).sort(), ['photo', 'polygons']);
    assert.ok((await capabilities()).has('photo'));
    assert.ok(!(await capabilities()).has('rgb'));
    assert.ok((await getMap('photo')).paintedPixels() > 0);
    assert.equal((await stack.call('GET', `${layerUrl('rgb')}/properties`)).status, 404);
  });

  it('sets the CRS a layer is read in', async () => {
    const reply = await stack.call('PATCH', layerUrl('polygons'), { crs: 'EPSG:3857' });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal((reply.body as { crs: string }).crs, 'EPSG:3857');
    const srs = mapLayer('polygons').getElementsByTagName('srs')[0] as Element;
    assert.equal(childText(children(srs, 'spatialrefsys')[0] as Element, 'authid'), 'EPSG:3857');
  });

  it('refuses what it cannot write with the client error, leaving the file as it was', async () => {
    const before = readFileSync(file, 'utf8');
    const cases: Array<[string, unknown, number]> = [
      ['nothing', {}, 400],
      ['unknown', { title: 'x' }, 404],
      ['polygons', { name: 'photo' }, 409],
      ['polygons', { short_name: '1 bad name' }, 400],
      ['polygons', { crs: 'EPSG:999999' }, 400],
      ['polygons', { opacity: 2 }, 400],
      ['polygons', { blending: 'glow' }, 400],
      ['polygons', { keywords: ['a,b'] }, 400],
      ['polygons', { colour: 'red' }, 400],
    ];
    for (const [layer, body, status] of cases) {
      const reply = await stack.call('PATCH', layerUrl(layer), body);
      assert.equal(reply.status, status, `${layer} ${JSON.stringify(body)}: ${JSON.stringify(reply.body)}`);
      assert.equal(typeof (reply.body as { error?: unknown }).error, 'string');
    }
    assert.equal(readFileSync(file, 'utf8'), before);
  });
});
