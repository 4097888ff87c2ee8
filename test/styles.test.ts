import assert from 'node:assert/strict';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { ows, projectProblems } from './support/qgis.js';
import { type Stack, startStack } from './support/stack.js';
import { selectedStorage } from './support/test-storage.js';
import { fillStyle, grayStretch } from './support/write-bodies.js';

describe(`styles drawn by a real QGIS Server (${selectedStorage()} storage)`, () => {
  let stack: Stack;
  let data: Fixtures;
  const storedProject = (): Promise<string> => stack.storage.projectXml('styled');
  const storedStyle = (style: string): Promise<string | undefined> => stack.storage.styleQml('styled', style);
  /** QGIS Server's MAP parameter for the project, as the API gives it. */
  const mapParameter = async (): Promise<string> => {
    const { body } = await stack.call('GET', '/api/projects/styled/layers/zones/map/url');
    return new URL((body as { url: string }).url).searchParams.get('MAP') ?? '';
  };
  const map = async (layer: string): Promise<Image> => {
    const response = await fetch(`${stack.api.url}/api/projects/styled/layers/${layer}/map`);
    assert.equal(response.status, 200);
    return decodePng(Buffer.from(await response.arrayBuffer()));
  };
  const post = async (path: string, body: unknown): Promise<number> =>
    (await stack.call('POST', `/api/projects/styled${path}`, body)).status;

  before(async () => {
    data = makeFixtures();
    stack = await startStack();
    await stack.call('POST', '/api/projects/', { name: 'styled', author: 'test' });
  });
  after(() => stack.stop());

  it('stores a style and reads it back in the shape that created it', async () => {
    assert.equal(await post('/styles', fillStyle('teal', '#00BBBB')), 201);
    assert.deepEqual((await stack.call('GET', '/api/projects/styled/styles')).body, ['teal']);
    const style = (await stack.call('GET', '/api/projects/styled/styles/teal')).body as {
      name: string;
      symbology: { symbol: string; properties: Record<string, unknown> };
    };
    assert.equal(style.name, 'teal');
    assert.equal(style.symbology.symbol, 'fill');
    assert.equal(style.symbology.properties['color'], '#00BBBB');
    assert.ok(await storedStyle('teal'));
  });

  it('applies the default style of a geometry to a new vector layer', async () => {
    assert.deepEqual((await stack.call('GET', '/api/projects/styled/styles/default')).body, {
      point: 'default',
      line: 'default',
      polygon: 'default',
    });
    assert.equal(
      (await stack.call('POST', '/api/projects/styled/styles/default', { style: 'teal', geometry: 'polygon' })).status,
      200,
    );
    assert.equal(
      await post('/layers', { type: 'vector', name: 'zones', datasource: `${data.geopackage}|layername=polygons` }),
      201,
    );
    const info = (await stack.call('GET', '/api/projects/styled/layers/zones')).body as {
      current_style: string;
      styles: string[];
    };
    assert.equal(info.current_style, 'teal');
    assert.deepEqual((await map('zones')).pixel(200, 200), [0, 187, 187, 255]);
  });

  it('switches the current style, which GET .../map follows, and draws others with STYLES', async () => {
    assert.equal(await post('/styles/orange', fillStyle('orange', '255,128,0')), 201);
    assert.equal(await post('/styles/half', fillStyle('half', '#FF0000', 0.5)), 201);
    assert.equal(await post('/layers/zones/style', { name: 'orange', current: true }), 200);
    assert.deepEqual((await map('zones')).pixel(200, 200), [255, 128, 0, 255]);
    assert.equal(await post('/layers/zones/style', { name: 'half', current: false }), 200);
    const { url } = (await stack.call('GET', '/api/projects/styled/layers/zones/map/url')).body as { url: string };
    const byName = new URL(url);
    byName.searchParams.set('STYLES', 'half');
    const half = decodePng(Buffer.from(await (await fetch(byName)).arrayBuffer())).pixel(200, 200);
    assert.equal(half[0], 255);
    assert.ok(Math.abs(half[3] - 128) <= 2, `opacity 0.5 halves the alpha (${half[3]})`);
    assert.deepEqual(
      (await map('zones')).pixel(200, 200),
      [255, 128, 0, 255],
      'the current style is still drawn by default',
    );
    const capabilities = await (
      await ows(stack.qgis, await mapParameter(), { SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' })
    ).text();
    const zones = capabilities.slice(capabilities.indexOf('<Name>zones</Name>'));
    for (const name of ['teal', 'orange', 'half']) assert.match(zones, new RegExp(`<Style>\\s*<Name>${name}</Name>`));
    assert.deepEqual(projectProblems(stack.qgis), []);
  });

  it('draws a line style with its colour and width, and a marker with its colour', async () => {
    const line = {
      type: 'vector',
      name: 'blue-line',
      rendering: {},
      symbology: { type: 'single_symbol', symbol: 'line', properties: { line_color: '#0000FF', line_width: 3 } },
    };
    const marker = {
      type: 'vector',
      name: 'green-dot',
      rendering: {},
      symbology: {
        type: 'single_symbol',
        symbol: 'marker',
        properties: { color: '#00FF00', size: 6, outline_style: 'no' },
      },
    };
    assert.equal(await post('/styles', line), 201);
    assert.equal(await post('/styles', marker), 201);
    await post('/layers', { type: 'vector', name: 'roads', datasource: `${data.geopackage}|layername=lines` });
    await post('/layers', { type: 'vector', name: 'towns', datasource: `${data.geopackage}|layername=points` });
    const thin = (await map('roads')).paintedPixels();
    assert.equal(await post('/layers/roads/style', { name: 'blue-line', current: true }), 200);
    const roads = await map('roads');
    assert.deepEqual(roads.pixel(200, 200), [0, 0, 255, 255]);
    assert.ok(roads.paintedPixels() > thin * 3, 'the 3 mm line is wider than the default');
    assert.equal(await post('/layers/towns/style', { name: 'green-dot', current: true }), 200);
    assert.deepEqual((await map('towns')).pixel(200, 200), [0, 255, 0, 255]);
  });

  it('swaps channels with a multibandcolor style and changes grey levels with user-defined limits', async () => {
    await post('/layers', { type: 'raster', name: 'rgb', datasource: data.rgbTiff });
    const colours = (red: number, green: number, blue: number, name: string): unknown => ({
      type: 'raster',
      name,
      rendering: {},
      symbology: {
        type: 'multibandcolor',
        properties: {
          red: { band: red },
          green: { band: green },
          blue: { band: blue },
          contrast_enhancement: { algorithm: 'NoEnhancement', limits_min_max: 'MinMax' },
        },
      },
    });
    assert.equal(await post('/styles', colours(1, 2, 3, 'natural')), 201);
    assert.equal(await post('/styles', colours(3, 2, 1, 'swapped')), 201);
    await post('/layers/rgb/style', { name: 'natural', current: true });
    assert.deepEqual((await map('rgb')).pixel(100, 100), [200, 40, 90, 255]);
    await post('/layers/rgb/style', { name: 'swapped', current: true });
    assert.deepEqual((await map('rgb')).pixel(100, 100), [90, 40, 200, 255]);

    await post('/layers', { type: 'raster', name: 'elevation', datasource: data.floatTiff });
    const gray = (name: string, min: number, max: number): unknown => grayStretch(name, { min, max });
    assert.equal(await post('/styles', gray('wide', 0, 250)), 201);
    assert.equal(await post('/styles', gray('narrow', 0, 150)), 201);
    await post('/layers/elevation/style', { name: 'wide', current: true });
    const [wideGrey] = (await map('elevation')).pixel(200, 200);
    await post('/layers/elevation/style', { name: 'narrow', current: true });
    const [narrowGrey] = (await map('elevation')).pixel(200, 200);
    // The centre pixel holds 127.5: stretched over 0..250 it is grey 130, over 0..150 grey 217.
    assert.ok(Math.abs(wideGrey - 130) <= 2, `grey over 0..250: ${wideGrey}`);
    assert.ok(Math.abs(narrowGrey - 217) <= 2, `grey over 0..150: ${narrowGrey}`);
  });

  it('refuses to delete a current style and deletes others from layers and disk', async () => {
    const refused = await stack.call('DELETE', '/api/projects/styled/styles/orange');
    assert.equal(refused.status, 409);
    assert.ok(await storedStyle('orange'));
    assert.deepEqual(await stack.call('DELETE', '/api/projects/styled/styles/half'), { status: 200, body: true });
    assert.equal(await storedStyle('half'), undefined);
    const zones = (await stack.call('GET', '/api/projects/styled/layers/zones')).body as { styles: string[] };
    assert.ok(!zones.styles.includes('half'));
    assert.ok(!(await storedProject()).includes('name="half"'));
  });

  describe('bad input changes nothing', () => {
    const cases: Array<[string, string, string, unknown, number]> = [
      [
        'an unknown symbol',
        'POST',
        '/styles',
        {
          type: 'vector',
          name: 'x',
          rendering: {},
          symbology: { type: 'single_symbol', symbol: 'hexagon', properties: {} },
        },
        400,
      ],
      [
        'an unknown property',
        'POST',
        '/styles',
        {
          type: 'vector',
          name: 'x',
          rendering: {},
          symbology: { type: 'single_symbol', symbol: 'fill', properties: { sparkle: 1 } },
        },
        400,
      ],
      ['a bad colour', 'POST', '/styles', fillStyle('x', '#GG0000'), 400],
      ['a style name with a slash', 'POST', '/styles', fillStyle('a/b', '#000000'), 400],
      ['a duplicate style', 'POST', '/styles', fillStyle('teal', '#000000'), 409],
      ['a body name that differs from the path', 'POST', '/styles/y', fillStyle('x', '#000000'), 400],
      ['a wrong geometry word', 'POST', '/styles/default', { name: 'teal', geometry: 'circle' }, 400],
      ['a default style for the wrong geometry', 'POST', '/styles/default', { name: 'teal', geometry: 'line' }, 400],
      ['an unknown default style', 'POST', '/styles/default', { name: 'nope', geometry: 'line' }, 404],
      ['an unknown style on a layer', 'POST', '/layers/zones/style', { name: 'nope', current: true }, 404],
      ['a style on an unknown layer', 'POST', '/layers/nope/style', { name: 'teal', current: true }, 404],
      ['a fill style on a line layer', 'POST', '/layers/roads/style', { name: 'teal', current: true }, 422],
    ];
    for (const [situation, method, path, body, status] of cases) {
      it(`answers ${status} to ${situation}`, async () => {
        const before = await storedProject();
        const styles = (await stack.call('GET', '/api/projects/styled/styles')).body;
        const reply = await stack.call(method, `/api/projects/styled${path}`, body);
        assert.equal(reply.status, status, JSON.stringify(reply.body));
        assert.equal(typeof (reply.body as { error: unknown }).error, 'string');
        assert.equal(await storedProject(), before);
        assert.deepEqual((await stack.call('GET', '/api/projects/styled/styles')).body, styles);
      });
    }
    it('answers 404 for an unknown style or project', async () => {
      assert.equal((await stack.call('GET', '/api/projects/styled/styles/nope')).status, 404);
      assert.equal((await stack.call('DELETE', '/api/projects/styled/styles/nope')).status, 404);
      assert.equal((await stack.call('GET', '/api/projects/nowhere/styles')).status, 404);
    });
  });
});
