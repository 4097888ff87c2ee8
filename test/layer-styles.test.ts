import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Conflict, NotFound, Unprocessable } from '../src/errors.js';
import {
  currentLayerStyleName,
  layerStyleNames,
  putLayerStyle,
  removeLayerStyle,
  setCurrentLayerStyle,
} from '../src/qgis/style/layer-styles.js';
import { styleToQml } from '../src/qgis/style/qml.js';
import type { Style } from '../src/qgis/style/schema.js';
import { loadSymbologyCatalogue, type SymbologyCatalogue } from '../src/qgis/symbology/catalogue.js';
import { childElements, childText, firstChild, path, type XmlDocument, type XmlElement } from '../src/qgis/xml/node.js';
import { parseXml } from '../src/qgis/xml/parse.js';
import { serializeXml } from '../src/qgis/xml/serialize.js';
import { after, before, describe, test } from './support/node-test.js';
import { startTestQgis } from './support/qgis-runtime.js';
import { makeData, pyqgis, type Rgba } from './support/style-oracle.js';

const EXTENT = [0, 0, 10, 10];
const INSIDE = [5, 5];

function fill(name: string, color: string): Style {
  return {
    type: 'vector',
    name,
    rendering: { opacity: 1 },
    symbology: { type: 'single_symbol', symbol: 'fill', properties: { color, outline_style: 'no' } },
  };
}

function rgb(name: string, bands: [number, number, number]): Style {
  const band = (n: number) => ({ band: n, min: 0, max: 255 });
  return {
    type: 'raster',
    name,
    symbology: {
      type: 'multibandcolor',
      properties: {
        red: band(bands[0]),
        green: band(bands[1]),
        blue: band(bands[2]),
        contrast_enhancement: { algorithm: 'StretchToMinimumMaximum', limits_min_max: 'UserDefined' },
      },
    },
  };
}

function mapLayer(project: XmlDocument, name: string): XmlElement {
  const layers = childElements(path(project.root, 'projectlayers') as XmlElement, 'maplayer');
  const found = layers.find((layer) => childText(layer, 'layername') === name);
  assert.ok(found, `no layer ${name}`);
  return found;
}

function fillColour(layer: XmlElement): string {
  const symbolLayer = path(layer, 'renderer-v2', 'symbols', 'symbol', 'layer') as XmlElement;
  return (
    childElements(symbolLayer, 'prop')
      .find((prop) => prop.attributes.get('k') === 'color')
      ?.attributes.get('v') ?? ''
  );
}

describe('layer styles in a project', () => {
  let catalogue: SymbologyCatalogue;
  let directory: string;
  let projectPath: string;
  let original: string;
  const qml = (style: Style) => styleToQml(style, { catalogue });

  before(async () => {
    catalogue = await loadSymbologyCatalogue('3.22.16');
    directory = await mkdtemp(join(tmpdir(), 'layer-styles-'));
    projectPath = join(directory, 'project.qgs');
    await makeData(directory);
    const [made] = await pyqgis([
      {
        op: 'make_project',
        path: projectPath,
        layers: [
          { kind: 'vector', source: `${directory}/vector.gpkg|layername=polygon`, name: 'polygon' },
          { kind: 'raster', source: `${directory}/rgb.tif`, name: 'rgb' },
        ],
      },
    ]);
    assert.equal(made?.ok, true);
    original = await readFile(projectPath, 'utf8');
  });
  after(() => rm(directory, { recursive: true, force: true }));

  test('a style added without current joins the manager and leaves the drawn style alone', () => {
    const layer = mapLayer(parseXml(original), 'polygon');
    const drawn = fillColour(layer);
    putLayerStyle(layer, 'blue', qml(fill('blue', '#0000FF')), false);
    assert.deepEqual(layerStyleNames(layer), ['default', 'blue']);
    assert.equal(currentLayerStyleName(layer), 'default');
    assert.equal(fillColour(layer), drawn);
    const stored = firstChild(layerStyleEntry(layer, 'blue'), 'qgis') as XmlElement;
    assert.equal(fillColour(stored), '0,0,255,255');
  });

  test('making a style current swaps it with the current one, and back', () => {
    const layer = mapLayer(parseXml(original), 'polygon');
    const drawn = fillColour(layer);
    putLayerStyle(layer, 'red', qml(fill('red', '#FF0000')), true);
    assert.equal(currentLayerStyleName(layer), 'red');
    assert.equal(fillColour(layer), '255,0,0,255');
    assert.equal(childElements(layer, 'renderer-v2').length, 1);
    assert.equal(childElements(layer, 'blendMode').length, 1);
    assert.equal(layerStyleEntry(layer, 'red').children.length, 0);
    assert.equal(fillColour(firstChild(layerStyleEntry(layer, 'default'), 'qgis') as XmlElement), drawn);
    setCurrentLayerStyle(layer, 'default');
    assert.equal(fillColour(layer), drawn);
    assert.equal(fillColour(firstChild(layerStyleEntry(layer, 'red'), 'qgis') as XmlElement), '255,0,0,255');
    assert.throws(() => setCurrentLayerStyle(layer, 'green'), NotFound);
  });

  test('updating the current style rewrites what the layer draws', () => {
    const layer = mapLayer(parseXml(original), 'polygon');
    putLayerStyle(layer, 'red', qml(fill('red', '#FF0000')), true);
    putLayerStyle(layer, 'red', qml(fill('red', '#00FF00')), false);
    assert.equal(currentLayerStyleName(layer), 'red');
    assert.equal(fillColour(layer), '0,255,0,255');
  });

  test('only a style that is not current can be removed', () => {
    const layer = mapLayer(parseXml(original), 'polygon');
    putLayerStyle(layer, 'blue', qml(fill('blue', '#0000FF')), true);
    assert.throws(() => removeLayerStyle(layer, 'blue'), Conflict);
    assert.throws(() => removeLayerStyle(layer, 'nope'), NotFound);
    removeLayerStyle(layer, 'default');
    assert.deepEqual(layerStyleNames(layer), ['blue']);
  });

  test('a style that cannot draw the layer is refused', () => {
    const project = parseXml(original);
    const marker: Style = { type: 'vector', name: 'm', symbology: { type: 'single_symbol', symbol: 'marker' } };
    assert.throws(() => putLayerStyle(mapLayer(project, 'polygon'), 'm', qml(marker), false), Unprocessable);
    assert.throws(
      () => putLayerStyle(mapLayer(project, 'polygon'), 'r', qml(rgb('r', [1, 2, 3])), false),
      Unprocessable,
    );
    assert.throws(() => putLayerStyle(mapLayer(project, 'rgb'), 'f', qml(fill('f', '#FFFFFF')), false), Unprocessable);
  });

  describe('drawn by QGIS', () => {
    let stylesPath: string;
    before(async () => {
      const project = parseXml(original);
      const polygon = mapLayer(project, 'polygon');
      putLayerStyle(polygon, 'teal', qml(fill('teal', '#00BBBB')), true);
      putLayerStyle(polygon, 'red', qml(fill('red', '#FF0000')), false);
      const raster = mapLayer(project, 'rgb');
      putLayerStyle(raster, 'swapped', qml(rgb('swapped', [3, 2, 1])), true);
      putLayerStyle(raster, 'straight', qml(rgb('straight', [1, 2, 3])), false);
      stylesPath = join(directory, 'styles.qgs');
      await writeFile(stylesPath, serializeXml(project));
    });

    test('PyQGIS reads every style and draws each one', async () => {
      const render = (layer: string, style?: string) => ({ layer, style, extent: EXTENT, points: [INSIDE] });
      const [read] = await pyqgis([
        {
          op: 'project',
          path: stylesPath,
          renders: [
            render('polygon'),
            render('polygon', 'red'),
            render('polygon', 'default'),
            render('rgb'),
            render('rgb', 'straight'),
          ],
        },
      ]);
      assert.equal(read?.ok, true, read?.message);
      assert.deepEqual(read?.layers?.['polygon'], { valid: true, styles: ['default', 'red', 'teal'], current: 'teal' });
      assert.deepEqual(read?.layers?.['rgb'], {
        valid: true,
        styles: ['default', 'straight', 'swapped'],
        current: 'swapped',
      });
      const pixels = (read?.pixels as Rgba[][]).map((drawn) => drawn[0]);
      assert.deepEqual(pixels[0], [0, 187, 187, 255]);
      assert.deepEqual(pixels[1], [255, 0, 0, 255]);
      assert.notDeepEqual(pixels[2], pixels[0]);
      assert.deepEqual(pixels[3], [200, 100, 10, 255]);
      assert.deepEqual(pixels[4], [10, 100, 200, 255]);
    });

    test('QGIS Server draws the current style without STYLES and another one by name', async () => {
      const server = await startTestQgis();
      // Its readiness probe, sent without a project, leaves an error of its own in the log.
      const logStart = server.log.length;
      try {
        const getMap = async (layer: string, style: string) => {
          const url = new URL(server.url);
          const parameters = {
            MAP: stylesPath,
            SERVICE: 'WMS',
            VERSION: '1.3.0',
            REQUEST: 'GetMap',
            LAYERS: layer,
            STYLES: style,
            CRS: 'EPSG:4326',
            BBOX: EXTENT.join(','),
            WIDTH: '100',
            HEIGHT: '100',
            FORMAT: 'image/png',
            TRANSPARENT: 'true',
          };
          for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
          const response = await fetch(url);
          assert.equal(response.headers.get('content-type'), 'image/png');
          const file = join(directory, `${layer}-${style || 'current'}.png`);
          await writeFile(file, Buffer.from(await response.arrayBuffer()));
          return { op: 'png', path: file, points: [[50, 50]] };
        };
        const images = await pyqgis([
          await getMap('polygon', ''),
          await getMap('polygon', 'red'),
          await getMap('rgb', ''),
          await getMap('rgb', 'straight'),
        ]);
        const pixels = images.map((image) => (image.pixels as Rgba[])[0]);
        assert.deepEqual(pixels, [
          [0, 187, 187, 255],
          [255, 0, 0, 255],
          [200, 100, 10, 255],
          [10, 100, 200, 255],
        ]);
        const capabilities = await (
          await fetch(`${server.url}?MAP=${stylesPath}&SERVICE=WMS&REQUEST=GetCapabilities`)
        ).text();
        for (const style of ['teal', 'red', 'swapped', 'straight'])
          assert.match(capabilities, new RegExp(`<Name>${style}</Name>`));
        const complaints = server.log
          .slice(logStart)
          .filter((line) => /WARNING|CRITICAL|broken|corrupt|error/i.test(line));
        // QGIS Server reports filling its capabilities cache as a warning; that is not about the project.
        assert.deepEqual(
          complaints.filter((line) => !/capabilities document/.test(line)),
          [],
        );
      } finally {
        await server.stop();
      }
    });
  });
});

function layerStyleEntry(layer: XmlElement, name: string): XmlElement {
  const manager = firstChild(layer, 'map-layer-style-manager') as XmlElement;
  const found = childElements(manager, 'map-layer-style').find((entry) => entry.attributes.get('name') === name);
  assert.ok(found, `no style ${name}`);
  return found;
}
