import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { readWithQgis } from './support/pyqgis-scripts.js';
import { ows, projectProblems, publishedLayers } from './support/qgis.js';
import { INFO_LOG_LEVEL } from './support/qgis-runtime.js';
import { type Stack, startStack } from './support/stack.js';

describe('layers on a real QGIS Server', () => {
  let stack: Stack;
  let data: Fixtures;
  const projectFile = (name: string): string => join(stack.projectsDir, name, `${name}.qgs`);

  before(async () => {
    data = makeFixtures();
    stack = await startStack({}, { env: INFO_LOG_LEVEL });
    await stack.call('POST', '/api/projects/', { name: 'world', author: 'test' });
    const layers = [
      { type: 'vector', name: 'polygons', datasource: `${data.geopackage}|layername=polygons` },
      { type: 'vector', name: 'lines', datasource: `${data.geopackage}|layername=lines` },
      { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` },
      { type: 'raster', name: 'rgb', datasource: data.rgbTiff },
      { type: 'raster', name: 'elevation', datasource: data.floatTiff },
      { type: 'vector', name: 'roads', datasource: data.shapefile },
    ];
    for (const layer of layers) {
      assert.deepEqual(
        await stack.call('POST', '/api/projects/world/layers', layer),
        { status: 201, body: true },
        layer.name,
      );
    }
  });
  after(() => stack.stop());

  it('lists the layers in project order', async () => {
    assert.deepEqual((await stack.call('GET', '/api/projects/world/layers')).body, [
      'polygons',
      'lines',
      'points',
      'rgb',
      'elevation',
      'roads',
    ]);
  });

  it('describes a vector layer with every field', async () => {
    assert.deepEqual((await stack.call('GET', '/api/projects/world/layers/lines')).body, {
      name: 'lines',
      type: 'vector',
      source: `${data.geopackage}|layername=lines`,
      crs: 'EPSG:4326',
      bbox: '1 44, 3 46',
      bbox_wgs84: '1 44, 3 46',
      current_style: 'default',
      styles: ['default'],
      valid: true,
      geometry: 'MultiLineString',
    });
    const roads = (await stack.call('GET', '/api/projects/world/layers/roads')).body as Record<string, unknown>;
    assert.equal(roads['geometry'], 'LineString');
  });

  it('describes raster layers with bands and pixel type', async () => {
    const elevation = (await stack.call('GET', '/api/projects/world/layers/elevation')).body as Record<string, unknown>;
    assert.equal(elevation['crs'], 'EPSG:3857');
    assert.equal(elevation['bbox'], '100000 5550000, 150000 5600000');
    assert.equal(elevation['bands'], 1);
    assert.equal(elevation['data_type'], 'Float32');
    assert.equal(elevation['valid'], true);
    const rgb = (await stack.call('GET', '/api/projects/world/layers/rgb')).body as Record<string, unknown>;
    assert.equal(rgb['bands'], 3);
    assert.equal(rgb['data_type'], 'Byte');
  });

  it('publishes every layer in GetCapabilities without complaint', async () => {
    assert.deepEqual(await publishedLayers(stack.qgis, projectFile('world')), [
      'polygons',
      'lines',
      'points',
      'rgb',
      'elevation',
      'roads',
    ]);
    assert.deepEqual(projectProblems(stack.qgis), []);
  });

  it('draws each layer: polygon fill, line, points, raster colours', async () => {
    const draw = async (name: string): Promise<ReturnType<typeof decodePng>> => {
      const response = await fetch(`${stack.api.url}/api/projects/world/layers/${name}/map`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/png');
      const image = decodePng(Buffer.from(await response.arrayBuffer()));
      assert.equal(image.width, 400);
      assert.equal(image.height, 400);
      return image;
    };
    const polygons = await draw('polygons');
    assert.ok(polygons.paintedPixels() > 150_000, 'the polygon covers the map');
    const lines = await draw('lines');
    assert.ok(lines.paintedPixels() > 400 && lines.paintedPixels() < 20_000, 'two thin diagonals');
    assert.ok(lines.pixel(200, 200)[3] > 0, 'the diagonals cross in the middle');
    const points = await draw('points');
    assert.ok(points.pixel(200, 200)[3] > 0, 'a point in the middle');
    assert.ok(points.pixel(100, 300)[3] === 0 || points.paintedPixels() < 10_000);
    const rgb = await draw('rgb');
    assert.deepEqual(rgb.pixel(200, 200), [200, 40, 90, 255]);
    const elevation = await draw('elevation');
    assert.equal(elevation.pixel(200, 2)[3], 0, 'no-data row is transparent');
    const [low] = elevation.pixel(200, 100);
    const [high] = elevation.pixel(200, 390);
    assert.ok(high > low, 'values grow downwards and are stretched to grey');
  });

  it('GET .../map returns the image QGIS Server draws for .../map/url', async () => {
    const { url } = (await stack.call('GET', '/api/projects/world/layers/polygons/map/url')).body as { url: string };
    const parameters = new URL(url).searchParams;
    assert.equal(parameters.get('REQUEST'), 'GetMap');
    assert.equal(parameters.get('VERSION'), '1.3.0');
    assert.equal(parameters.get('CRS'), 'EPSG:4326');
    assert.equal(parameters.get('BBOX'), '44,1,46,3', 'latitude first for EPSG:4326 in WMS 1.3.0');
    assert.equal(parameters.get('MAP'), projectFile('world'));
    const direct = Buffer.from(await (await fetch(url)).arrayBuffer());
    const viaApi = Buffer.from(
      await (await fetch(`${stack.api.url}/api/projects/world/layers/polygons/map`)).arrayBuffer(),
    );
    assert.deepEqual(viaApi, direct);
  });

  it('GET .../map answers alike with the schema named or a trailing slash, and refuses a bad name', async () => {
    const base = `${stack.api.url}/api/projects/world/layers/polygons`;
    const plain = Buffer.from(await (await fetch(`${base}/map`)).arrayBuffer());
    for (const suffix of ['/map?schema=public', '/map/']) {
      const response = await fetch(base + suffix);
      assert.equal(response.status, 200, suffix);
      assert.deepEqual(Buffer.from(await response.arrayBuffer()), plain, suffix);
    }
    const refused = await fetch(`${stack.api.url}/api/projects/%2Ehidden/layers/polygons/map`);
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { error: string }).error, 'project name ".hidden" starts with a dot');
  });

  it('GET .../map follows a layer replaced under the same name, by this API or by another writer', async () => {
    await stack.call('POST', '/api/projects/', { name: 'swapped', author: 'test' });
    const add = (datasource: string) =>
      stack.call('POST', '/api/projects/swapped/layers', { type: 'raster', name: 'grid', datasource });
    const mapUrl = async () =>
      ((await stack.call('GET', '/api/projects/swapped/layers/grid/map/url')).body as { url: string }).url;
    const centre = async (url: string) =>
      decodePng(Buffer.from(await (await fetch(url)).arrayBuffer())).pixel(200, 200);
    const viaApi = `${stack.api.url}/api/projects/swapped/layers/grid/map`;
    /** The centre of the API's map, and how many GetMaps QGIS Server logged for it. */
    const centreWithGetMaps = async () => {
      const getMaps = () => stack.qgis.log.filter((line) => line.includes('REQUEST:GetMap')).length;
      const before = getMaps();
      const pixel = await centre(viaApi);
      await sleep(300); // QGIS Server's log arrives on its own pipe
      return [pixel, getMaps() - before] as const;
    };
    const elevationBox = '100000,5550000,150000,5600000';
    await add(data.floatTiff);
    const elevationCentre = await centre(viaApi);
    assert.deepEqual(await centre(viaApi), elevationCentre, 'drawn again with the URL built for the first map');
    assert.equal(new URL(await mapUrl()).searchParams.get('BBOX'), elevationBox);
    const elevationText = readFileSync(projectFile('swapped'), 'utf8');
    await stack.call('DELETE', '/api/projects/swapped/layers/grid');
    await add(data.rgbTiff);
    // After this API's own change the old URL is not sent at all.
    const [rgbCentre, rgbGetMaps] = await centreWithGetMaps();
    assert.equal(rgbGetMaps, 1);
    const rgbUrl = await mapUrl();
    assert.notEqual(new URL(rgbUrl).searchParams.get('BBOX'), elevationBox);
    assert.deepEqual(rgbCentre, await centre(rgbUrl), 'the RGB raster, drawn at its own extent');
    assert.notDeepEqual(rgbCentre, elevationCentre);
    writeFileSync(projectFile('swapped'), elevationText);
    // After another process's change the old URL's answer is discarded and QGIS Server asked again.
    const [rewrittenCentre, rewrittenGetMaps] = await centreWithGetMaps();
    assert.deepEqual(rewrittenCentre, elevationCentre, 'the project written by another process is read again');
    assert.equal(rewrittenGetMaps, 2);
    assert.equal(new URL(await mapUrl()).searchParams.get('BBOX'), elevationBox);
  });

  it('uses the crs given in the body over the detected one', async () => {
    await stack.call('POST', '/api/projects/', { name: 'override', author: 'test' });
    const body = { type: 'raster', name: 'rgb', datasource: data.rgbTiff, crs: 32631 };
    assert.equal((await stack.call('POST', '/api/projects/override/layers', body)).status, 201);
    assert.equal(
      ((await stack.call('GET', '/api/projects/override/layers/rgb')).body as { crs: string }).crs,
      'EPSG:32631',
    );
  });

  it('fixes a raster layer added with datetime at that instant, in UTC, as QGIS itself reads it', async () => {
    await stack.call('POST', '/api/projects/', { name: 'dated', author: 'test' });
    const body = { type: 'raster', name: 'rgb', datasource: data.rgbTiff, datetime: '2024-05-01T02:00:00+02:00' };
    assert.deepEqual(await stack.call('POST', '/api/projects/dated/layers', body), { status: 201, body: true });
    const instant = '2024-05-01T00:00:00Z';
    const info = (await stack.call('GET', '/api/projects/dated/layers/rgb')).body as Record<string, unknown>;
    assert.equal(info['datetime'], instant);
    assert.equal(
      ((await stack.call('GET', '/api/projects/world/layers/rgb')).body as Record<string, unknown>)['datetime'],
      undefined,
    );
    // Mode 0: QgsRasterLayerTemporalProperties.ModeFixedTemporalRange.
    const temporal = { mode: 0, begin: instant, end: instant };
    assert.deepEqual(readWithQgis(projectFile('dated')).layers['rgb'], { valid: true, provider: 'gdal', temporal });
    assert.deepEqual(await publishedLayers(stack.qgis, projectFile('dated')), ['rgb']);
    assert.deepEqual(projectProblems(stack.qgis), []);
    const map = await ows(stack.qgis, projectFile('dated'), {
      SERVICE: 'WMS',
      VERSION: '1.3.0',
      REQUEST: 'GetMap',
      LAYERS: 'rgb',
      STYLES: '',
      CRS: 'EPSG:4326',
      BBOX: '44,1,46,3',
      WIDTH: '50',
      HEIGHT: '50',
      FORMAT: 'image/png',
      TIME: instant,
    });
    assert.deepEqual(decodePng(Buffer.from(await map.arrayBuffer())).pixel(25, 25), [200, 40, 90, 255]);
  });

  it('removes a layer from the project and from QGIS Server', async () => {
    await stack.call('POST', '/api/projects/', { name: 'removal', author: 'test' });
    await stack.call('POST', '/api/projects/removal/layers', { type: 'raster', name: 'a', datasource: data.rgbTiff });
    await stack.call('POST', '/api/projects/removal/layers', { type: 'raster', name: 'b', datasource: data.floatTiff });
    assert.deepEqual(await stack.call('DELETE', '/api/projects/removal/layers/a'), { status: 200, body: true });
    assert.deepEqual((await stack.call('GET', '/api/projects/removal/layers')).body, ['b']);
    const text = readFileSync(projectFile('removal'), 'utf8');
    assert.ok(!text.includes('<layername>a</layername>'));
    assert.equal((text.match(/<layer-tree-layer /g) ?? []).length, 1);
    assert.deepEqual(await publishedLayers(stack.qgis, projectFile('removal')), ['b']);
    assert.equal((await stack.call('GET', '/api/projects/removal/layers/a')).status, 404);
  });

  describe('bad requests leave the project unchanged', () => {
    const cases: Array<[string, string, unknown, number]> = [
      ['a missing datasource', 'world', { type: 'vector', name: 'x' }, 400],
      ['an unknown type', 'world', { type: 'mesh', name: 'x', datasource: '/tmp/x' }, 400],
      ['a name of the wrong type', 'world', { type: 'vector', name: 3, datasource: '/tmp/x' }, 400],
      ['a name with a slash', 'world', { type: 'vector', name: 'a/b', datasource: '/tmp/x.gpkg' }, 400],
      ['a name with ..', 'world', { type: 'vector', name: 'a..b', datasource: '/tmp/x.gpkg' }, 400],
      ['a relative datasource', 'world', { type: 'vector', name: 'x', datasource: 'vectors.gpkg' }, 400],
      ['an unknown crs', 'world', { type: 'raster', name: 'x', datasource: 'RGB', crs: 999999 }, 400],
      ['a duplicate name', 'world', { type: 'vector', name: 'lines', datasource: 'GEOPACKAGE' }, 409],
      [
        'a datasource that does not open',
        'world',
        { type: 'vector', name: 'x', datasource: '/nonexistent/file.gpkg' },
        422,
      ],
      ['raster type on vector data', 'world', { type: 'raster', name: 'x', datasource: 'GEOPACKAGE' }, 422],
      ['vector type on raster data', 'world', { type: 'vector', name: 'x', datasource: 'RGB' }, 422],
      [
        'an unknown layer in the file',
        'world',
        { type: 'vector', name: 'x', datasource: 'GEOPACKAGE|layername=nope' },
        422,
      ],
      ['an unknown project', 'nowhere', { type: 'vector', name: 'x', datasource: 'GEOPACKAGE' }, 404],
      [
        'a datetime without seconds',
        'world',
        { type: 'raster', name: 'x', datasource: 'RGB', datetime: '2024-05-01T00:00' },
        400,
      ],
      [
        'a datetime that is no date',
        'world',
        { type: 'raster', name: 'x', datasource: 'RGB', datetime: '2024-02-30T00:00:00Z' },
        400,
      ],
      [
        'a datetime that is a number',
        'world',
        { type: 'raster', name: 'x', datasource: 'RGB', datetime: 20240501 },
        400,
      ],
      [
        'a datetime on a vector layer',
        'world',
        { type: 'vector', name: 'x', datasource: 'GEOPACKAGE', datetime: '2024-05-01T00:00:00Z' },
        400,
      ],
    ];
    for (const [situation, project, body, status] of cases) {
      it(`answers ${status} to ${situation}`, async () => {
        const resolved = JSON.parse(
          JSON.stringify(body).replace('GEOPACKAGE', data.geopackage).replace('RGB', data.rgbTiff),
        ) as unknown;
        const before = readFileSync(projectFile('world'), 'utf8');
        const reply = await stack.call('POST', `/api/projects/${project}/layers`, resolved);
        assert.equal(reply.status, status, JSON.stringify(reply.body));
        assert.equal(typeof (reply.body as { error: unknown }).error, 'string');
        assert.equal(readFileSync(projectFile('world'), 'utf8'), before);
      });
    }

    it('says what is wrong with a datetime', async () => {
      const errorOf = async (body: object): Promise<string> =>
        ((await stack.call('POST', '/api/projects/world/layers', body)).body as { error: string }).error;
      const malformed = await errorOf({ type: 'raster', name: 'x', datasource: data.rgbTiff, datetime: '1 May 2024' });
      assert.equal(malformed, 'datetime "1 May 2024" is not an ISO 8601 date-time such as 2024-05-01T00:00:00Z');
      const vector = await errorOf({
        type: 'vector',
        name: 'x',
        datasource: data.geopackage,
        datetime: '2024-05-01T00:00:00Z',
      });
      assert.equal(vector, 'datetime applies to raster layers only');
    });

    it('answers 404 to an unknown layer on every layer route', async () => {
      for (const [method, path] of [
        ['GET', '/api/projects/world/layers/nope'],
        ['DELETE', '/api/projects/world/layers/nope'],
        ['GET', '/api/projects/world/layers/nope/map'],
        ['GET', '/api/projects/world/layers/nope/map/url'],
        ['GET', '/api/projects/nowhere/layers'],
      ] as const) {
        assert.equal((await stack.call(method, path)).status, 404, `${method} ${path}`);
      }
    });
  });

  it('keeps all of 20 concurrent layer additions, in a project QGIS Server loads', async () => {
    await stack.call('POST', '/api/projects/', { name: 'busy', author: 'test' });
    const names = Array.from({ length: 20 }, (_, index) => `layer${index}`);
    const replies = await Promise.all(
      names.map((name, index) =>
        stack.call('POST', '/api/projects/busy/layers', {
          type: index % 2 ? 'raster' : 'vector',
          name,
          datasource: index % 2 ? data.rgbTiff : `${data.geopackage}|layername=polygons`,
        }),
      ),
    );
    assert.deepEqual(
      replies.map((reply) => reply.status),
      names.map(() => 201),
    );
    assert.deepEqual(new Set((await stack.call('GET', '/api/projects/busy/layers')).body as string[]), new Set(names));
    assert.deepEqual(new Set(await publishedLayers(stack.qgis, projectFile('busy'))), new Set(names));
    const map = await ows(stack.qgis, projectFile('busy'), {
      SERVICE: 'WMS',
      VERSION: '1.3.0',
      REQUEST: 'GetMap',
      LAYERS: 'layer1',
      STYLES: '',
      CRS: 'EPSG:4326',
      BBOX: '44,1,46,3',
      WIDTH: '50',
      HEIGHT: '50',
      FORMAT: 'image/png',
    });
    assert.deepEqual(decodePng(Buffer.from(await map.arrayBuffer())).pixel(25, 25), [200, 40, 90, 255]);
  });
});

describe('GET .../map when QGIS Server cannot draw', () => {
  let stack: Stack;
  let data: Fixtures;

  before(async () => {
    data = makeFixtures();
    stack = await startStack();
    await stack.call('POST', '/api/projects/', { name: 'broken', author: 'test' });
  });
  after(() => stack.stop());

  it('answers 502 naming the layer when QGIS Server cannot draw it (its answer goes to the log)', async () => {
    const vanishing = join(data.dir, 'vanishing.tif');
    copyFileSync(data.rgbTiff, vanishing);
    await stack.call('POST', '/api/projects/broken/layers', { type: 'raster', name: 'gone', datasource: vanishing });
    rmSync(vanishing);
    const response = await fetch(`${stack.api.url}/api/projects/broken/layers/gone/map`);
    assert.equal(response.status, 502);
    const { error } = (await response.json()) as { error: string };
    assert.match(error, /^QGIS Server could not draw layer "gone" \(HTTP \d+\): \S/);
  });

  it('answers 502 when QGIS Server is not running', async () => {
    await stack.call('POST', '/api/projects/broken/layers', { type: 'raster', name: 'rgb', datasource: data.rgbTiff });
    await stack.qgis.stop();
    const response = await fetch(`${stack.api.url}/api/projects/broken/layers/rgb/map`);
    assert.equal(response.status, 502);
    assert.match(((await response.json()) as { error: string }).error, /^QGIS Server cannot be reached: /);
  });
});
