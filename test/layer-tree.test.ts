import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { DOMParser } from '@xmldom/xmldom';

import { steward } from './support/cli.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, differingPixels, type Image } from './support/png.js';
import { ows } from './support/qgis.js';
import { type Stack, startStack } from './support/stack.js';

const PROJECT = 'tree';
const BBOX = '43,0,47,4';

const GROUPED = {
  children: [
    {
      type: 'group',
      name: 'vectors',
      title: 'All vectors',
      short_name: 'vector_data',
      abstract: 'Lines over polygons',
      children: [
        { type: 'layer', name: 'lines' },
        { type: 'layer', name: 'polygons' },
      ],
    },
    { type: 'layer', name: 'rgb', visible: false },
  ],
};

interface CapabilitiesLayer {
  name: string;
  title: string;
  abstract: string;
  children: CapabilitiesLayer[];
}

function childText(node: Element, name: string): string {
  return Array.from(node.childNodes).find((child) => child.nodeName === name)?.textContent ?? '';
}

function capabilitiesLayer(node: Element): CapabilitiesLayer {
  return {
    name: childText(node, 'Name'),
    title: childText(node, 'Title'),
    abstract: childText(node, 'Abstract'),
    children: Array.from(node.childNodes)
      .filter((child): child is Element => child.nodeName === 'Layer')
      .map(capabilitiesLayer),
  };
}

async function png(response: Response): Promise<Image> {
  const body = Buffer.from(await response.arrayBuffer());
  assert.equal(response.status, 200, body.toString('utf8').slice(0, 300));
  assert.match(response.headers.get('content-type') ?? '', /^image\/png/);
  return decodePng(body);
}

describe('the layer tree through the API, as QGIS Server publishes it', () => {
  let stack: Stack;
  let data: Fixtures;
  let file: string;
  const call = (method: string, body?: unknown) => stack.call(method, `/api/projects/${PROJECT}/tree`, body);
  const getMap = async (layers: string): Promise<Image> =>
    png(
      await ows(stack.qgis, file, {
        SERVICE: 'WMS',
        VERSION: '1.3.0',
        REQUEST: 'GetMap',
        LAYERS: layers,
        STYLES: '',
        CRS: 'EPSG:4326',
        BBOX,
        WIDTH: '200',
        HEIGHT: '200',
        FORMAT: 'image/png',
        TRANSPARENT: 'TRUE',
      }),
    );
  const capabilities = async (): Promise<CapabilitiesLayer> => {
    const response = await ows(stack.qgis, file, { SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' });
    const document = new DOMParser().parseFromString(await response.text(), 'text/xml');
    return capabilitiesLayer(document.getElementsByTagName('Layer')[0] as unknown as Element);
  };

  before(async () => {
    data = makeFixtures();
    stack = await startStack();
    await stack.call('POST', '/api/projects/', { name: PROJECT, author: 'test' });
    for (const [name, layer] of [
      ['rgb', { type: 'raster', datasource: data.rgbTiff }],
      ['polygons', { type: 'vector', datasource: `${data.geopackage}|layername=polygons` }],
      ['lines', { type: 'vector', datasource: `${data.geopackage}|layername=lines` }],
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

  it('lists new layers in the order they were added, visible', async () => {
    const reply = await call('GET');
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, {
      children: ['rgb', 'polygons', 'lines'].map((name) => ({ type: 'layer', name, visible: true })),
    });
  });

  it('writes groups QGIS Server publishes as nested layers, and draws a group as its layers', async () => {
    const reply = await call('PUT', GROUPED);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual((await call('GET')).body, reply.body);
    const root = await capabilities();
    assert.deepEqual(
      root.children.map(({ name, title, abstract, children }) => ({
        name,
        title,
        abstract,
        children: children.map((child) => child.name),
      })),
      [
        { name: 'vector_data', title: 'All vectors', abstract: 'Lines over polygons', children: ['lines', 'polygons'] },
        { name: 'rgb', title: 'rgb', abstract: '', children: [] },
      ],
    );
    // WMS draws the first layer named at the bottom: the group draws polygons under lines.
    const group = await getMap('vector_data');
    assert.ok(group.paintedPixels() > 0);
    assert.equal(differingPixels(group, await getMap('polygons,lines')), 0);
    assert.notEqual(differingPixels(group, await getMap('lines,polygons')), 0);
    assert.deepEqual((await stack.call('GET', `/api/projects/${PROJECT}/layers`)).body, ['lines', 'polygons', 'rgb']);
  });

  it('draws a group in the explicit drawing order', async () => {
    const reply = await call('PUT', { ...GROUPED, order: ['polygons', 'lines', 'rgb'] });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.deepEqual((reply.body as { order: string[] }).order, ['polygons', 'lines', 'rgb']);
    assert.equal(differingPixels(await getMap('vector_data'), await getMap('lines,polygons')), 0);
    const text = readFileSync(file, 'utf8');
    assert.match(text, /<custom-order enabled="1">/);
  });

  it('refuses a tree that misses a layer, repeats one or names an unknown one, and writes nothing', async () => {
    const before = readFileSync(file, 'utf8');
    const cases: Array<[unknown, RegExp]> = [
      [
        { children: [{ type: 'layer', name: 'rgb' }] },
        /"polygons", "lines" are missing|"lines", "polygons" are missing/,
      ],
      [
        {
          children: [
            { type: 'layer', name: 'rgb' },
            { type: 'layer', name: 'rgb' },
            {
              type: 'group',
              name: 'g',
              children: [
                { type: 'layer', name: 'lines' },
                { type: 'layer', name: 'polygons' },
              ],
            },
          ],
        },
        /"rgb" appear more than once/,
      ],
      [{ children: [...GROUPED.children, { type: 'layer', name: 'roads' }] }, /the project has no layer "roads"/],
      [{ ...GROUPED, order: ['rgb', 'lines'] }, /order must name every layer.*"polygons" are missing/],
    ];
    for (const [body, message] of cases) {
      const reply = await call('PUT', body);
      assert.equal(reply.status, 422, JSON.stringify(reply.body));
      assert.match((reply.body as { error: string }).error, message);
    }
    let deep: unknown = { type: 'layer', name: 'rgb' };
    for (let depth = 0; depth < 40; depth++) deep = { type: 'group', name: `g${depth}`, children: [deep] };
    const nested = await call('PUT', { children: [deep] });
    assert.equal(nested.status, 400, JSON.stringify(nested.body));
    const unknownField = await call('PUT', { children: [{ type: 'layer', name: 'rgb', colour: 'red' }] });
    assert.equal(unknownField.status, 400);
    assert.equal(readFileSync(file, 'utf8'), before);
  });

  it('prints the tree with steward tree', async () => {
    const printed = await steward(['tree', PROJECT], { STEWARD_SERVER_URL: stack.api.url });
    assert.equal(printed.code, 0, printed.err);
    assert.equal(
      printed.out,
      [
        '[x] vectors (group, WMS name vector_data, title "All vectors")',
        '  [x] lines',
        '  [x] polygons',
        '[ ] rgb',
        '',
        'Drawing order (top first): polygons, lines, rgb',
        '',
      ].join('\n'),
    );
  });
});
