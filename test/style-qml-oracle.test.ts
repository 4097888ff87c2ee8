import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { qgisColour } from '../src/qgis/style/colour.js';
import { describeQml, type QmlContext, qmlToStyle, styleToQml } from '../src/qgis/style/qml.js';
import type {
  MultiBandColorStyle,
  PseudoColorStyle,
  SingleBandGrayStyle,
  Style,
  VectorStyle,
} from '../src/qgis/style/schema.js';
import { parseStyle } from '../src/qgis/style/validate.js';
import { loadSymbologyCatalogue, type SymbologyCatalogue } from '../src/qgis/symbology/catalogue.js';
import { after, before, describe, test } from './support/node-test.js';
import { comparableXml, makeData, type OracleResult, pyqgis, type Rgba } from './support/style-oracle.js';

const EXTENT = [0, 0, 10, 10];
const CENTRE = [5, 5];
/** Centre of the gray raster's column 5, whose value is 25. */
const VALUE_25 = [2.75, 5];

function vector(
  symbol: VectorStyle['symbology']['symbol'],
  properties: Record<string, string | number>,
  opacity = 1,
): VectorStyle {
  return {
    type: 'vector',
    name: `${symbol}-style`,
    rendering: { opacity },
    symbology: { type: 'single_symbol', symbol, properties },
  };
}

const rendering = { brightness: 0, contrast: 0, gamma: 1, saturation: 0 };

function gray(contrast: SingleBandGrayStyle['symbology']['properties']['contrast_enhancement']): SingleBandGrayStyle {
  return {
    type: 'raster',
    name: 'gray',
    rendering,
    symbology: { type: 'singlebandgray', properties: { gray: { band: 1 }, contrast_enhancement: contrast } },
  };
}

function pseudocolor(interpolation: 'INTERPOLATED' | 'DISCRETE' | 'EXACT'): PseudoColorStyle {
  return {
    type: 'raster',
    name: `pseudocolor-${interpolation.toLowerCase()}`,
    rendering,
    symbology: {
      type: 'singlebandpseudocolor',
      properties: {
        band: 1,
        min: 0,
        max: 95,
        interpolation,
        stops: [
          { value: 0, colour: '#000000', label: 'none' },
          { value: 50, colour: '#FFFFFF', label: 'half' },
          { value: 95, colour: '#FF0000', label: 'full' },
        ],
      },
    },
  };
}

function rgb(
  bands: [number, number, number],
  limits: 'MinMax' | 'UserDefined',
  extra = rendering,
): MultiBandColorStyle {
  const range = limits === 'UserDefined' ? { min: 0, max: 255 } : {};
  return {
    type: 'raster',
    name: 'rgb',
    rendering: extra,
    symbology: {
      type: 'multibandcolor',
      properties: {
        red: { band: bands[0], ...range },
        green: { band: bands[1], ...range },
        blue: { band: bands[2], ...range },
        contrast_enhancement: { algorithm: 'NoEnhancement', limits_min_max: limits },
      },
    },
  };
}

const VECTOR_CASES = {
  fill: vector('fill', { color: '#00BBBB', outline_width: 1.5, outline_color: '255,0,0', style: 'solid' }),
  halfFill: vector('fill', { color: '#00BBBB', outline_style: 'no' }, 0.5),
  line: vector('line', { line_color: '#FF00FF', line_width: 2, line_style: 'dash' }),
  marker: vector('marker', { color: '#00FF00', size: 6, name: 'square', outline_color: '0,0,255,128' }),
};

const GRAY_STATISTICS = new Map([[1, { min: 0, max: 95 }]]);
const RGB_STATISTICS = new Map([
  [1, { min: 10, max: 10 }],
  [2, { min: 100, max: 100 }],
  [3, { min: 200, max: 200 }],
]);

function near(actual: Rgba | undefined, expected: Rgba, tolerance = 2): void {
  assert.ok(actual, 'no pixel');
  assert.ok(
    actual.every((value, i) => Math.abs(value - (expected[i] ?? 0)) <= tolerance),
    `pixel ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`,
  );
}

/** Each operation's pixels, within 2 of the expected RGBA values. */
function assertPixels(results: OracleResult[], expected: Rgba[][]): void {
  assert.equal(results.length, expected.length);
  results.forEach((result, i) => {
    assert.equal(result.ok, true, result.message);
    (expected[i] ?? []).forEach((pixel, j) => near((result.pixels as Rgba[])[j], pixel));
  });
}

/** Steward's QML (operation.steward) and QGIS's (operation.save) are the same tree. */
async function assertSameXml(operations: Array<{ save: string; steward: string }>): Promise<void> {
  for (const operation of operations) {
    const reference = comparableXml(await readFile(operation.save, 'utf8'));
    assert.deepEqual(comparableXml(await readFile(operation.steward, 'utf8')), reference, operation.steward);
  }
}

/** A style's own properties in the strings QGIS's QgsSymbolLayer::create() takes. */
function qgisProperties(style: VectorStyle, catalogue: SymbologyCatalogue): Record<string, string> {
  const known = catalogue.symbolLayer(style.symbology.symbol).properties;
  return Object.fromEntries(
    Object.entries(style.symbology.properties ?? {}).map(([key, value]) => [
      key,
      known[key]?.colour ? qgisColour(String(value), key) : String(value),
    ]),
  );
}

describe('style QML', () => {
  let catalogue: SymbologyCatalogue;
  let directory: string;
  const layers = {
    marker: () => ({ kind: 'vector', source: `${directory}/vector.gpkg|layername=point` }),
    line: () => ({ kind: 'vector', source: `${directory}/vector.gpkg|layername=line` }),
    fill: () => ({ kind: 'vector', source: `${directory}/vector.gpkg|layername=polygon` }),
    gray: () => ({ kind: 'raster', source: `${directory}/gray.tif` }),
    rgb: () => ({ kind: 'raster', source: `${directory}/rgb.tif` }),
  };

  async function write(name: string, style: Style, facts: Partial<QmlContext> = {}): Promise<string> {
    const path = join(directory, `${name}.qml`);
    await writeFile(path, styleToQml(parseStyle(style, catalogue), { catalogue, ...facts }));
    return path;
  }

  before(async () => {
    catalogue = await loadSymbologyCatalogue('3.22.16');
    directory = await mkdtemp(join(tmpdir(), 'style-qml-'));
    await makeData(directory);
  });
  after(() => rm(directory, { recursive: true, force: true }));

  test('a style read back from its QML is the style (canonical form in, same out)', () => {
    const fill = vector(
      'fill',
      {
        border_width_map_unit_scale: '3x:0,0,0,0,0,0',
        color: '#00BBBB',
        joinstyle: 'round',
        offset: '0,0',
        offset_map_unit_scale: '3x:0,0,0,0,0,0',
        offset_unit: 'MM',
        outline_color: '10,20,30,40',
        outline_style: 'dash dot',
        outline_width: 0.75,
        outline_width_unit: 'Pixel',
        style: 'b_diagonal',
      },
      0.25,
    );
    const styles: Style[] = [
      fill,
      gray({ algorithm: 'StretchToMinimumMaximum', limits_min_max: 'UserDefined', min: -3.5, max: 1e6 }),
      gray({ algorithm: 'NoEnhancement', limits_min_max: 'MinMax' }),
      rgb([3, 2, 1], 'UserDefined', { brightness: -20, contrast: 15, gamma: 0.5, saturation: 40 }),
      rgb([1, 1, 2], 'MinMax'),
    ];
    for (const style of styles) {
      const qml = styleToQml(parseStyle(style, catalogue), { catalogue });
      assert.deepEqual(qmlToStyle(qml, style.name, catalogue), style);
    }
  });

  test('a partial vector style reads back completed with the catalogue defaults, and is then stable', () => {
    const qml = styleToQml(VECTOR_CASES.line, { catalogue });
    const read = qmlToStyle(qml, 'line-style', catalogue) as VectorStyle;
    const properties = read.symbology.properties ?? {};
    assert.equal(properties['line_color'], '#FF00FF');
    assert.equal(properties['line_width'], 2);
    assert.equal(properties['capstyle'], 'square');
    assert.equal(Object.keys(properties).length, Object.keys(catalogue.symbolLayer('line').properties).length);
    assert.deepEqual(qmlToStyle(styleToQml(read, { catalogue }), 'line-style', catalogue), read);
  });

  test('Steward writes the QML QGIS writes for the same vector inputs, element by element', async () => {
    const cases = Object.entries(VECTOR_CASES);
    const operations = await Promise.all(
      cases.map(async ([name, style]) => ({
        op: 'reference_vector',
        layer: layers[style.symbology.symbol](),
        symbol: style.symbology.symbol,
        properties: qgisProperties(style, catalogue),
        opacity: style.rendering?.opacity ?? 1,
        save: join(directory, `${name}-reference.qml`),
        steward: await write(name, style),
      })),
    );
    await pyqgis(operations);
    await assertSameXml(operations);
  });

  test('Steward writes the QML QGIS writes for the same raster inputs, element by element', async () => {
    const userGray = gray({ algorithm: 'StretchToMinimumMaximum', limits_min_max: 'UserDefined', min: 0, max: 50 });
    const cases = [
      {
        name: 'gray-user',
        style: userGray,
        facts: {},
        reference: {
          renderer: 'singlebandgray',
          bands: { gray: 1 },
          ranges: { gray: { min: 0, max: 50 } },
          algorithm: 'StretchToMinimumMaximum',
          limits: 'None',
        },
      },
      {
        name: 'gray-minmax',
        style: gray({ algorithm: 'StretchToMinimumMaximum', limits_min_max: 'MinMax' }),
        facts: { bandStatistics: GRAY_STATISTICS },
        reference: {
          renderer: 'singlebandgray',
          bands: { gray: 1 },
          ranges: { gray: { min: 0, max: 95 } },
          algorithm: 'StretchToMinimumMaximum',
          limits: 'MinMax',
        },
      },
      {
        name: 'rgb-321',
        style: rgb([3, 2, 1], 'UserDefined', { brightness: 10, contrast: 20, gamma: 1.5, saturation: -30 }),
        facts: {},
        reference: {
          renderer: 'multibandcolor',
          bands: { red: 3, green: 2, blue: 1 },
          ranges: { red: { min: 0, max: 255 }, green: { min: 0, max: 255 }, blue: { min: 0, max: 255 } },
          algorithm: 'NoEnhancement',
          limits: 'None',
          rendering: { brightness: 10, contrast: 20, gamma: 1.5, saturation: -30 },
        },
      },
      {
        name: 'rgb-123',
        style: rgb([1, 2, 3], 'MinMax'),
        facts: { bandStatistics: RGB_STATISTICS },
        reference: {
          renderer: 'multibandcolor',
          bands: { red: 1, green: 2, blue: 3 },
          ranges: { red: { min: 10, max: 10 }, green: { min: 100, max: 100 }, blue: { min: 200, max: 200 } },
          algorithm: 'NoEnhancement',
          limits: 'MinMax',
        },
      },
    ];
    const operations = await Promise.all(
      cases.map(async ({ name, style, facts, reference }) => ({
        op: 'reference_raster',
        layer: style.symbology.type === 'singlebandgray' ? layers.gray() : layers.rgb(),
        rendering,
        ...reference,
        save: join(directory, `${name}-reference.qml`),
        steward: await write(name, style, facts),
      })),
    );
    await pyqgis(operations);
    await assertSameXml(operations);
  });

  test('QGIS loads each vector QML and holds the properties the style asked for', async () => {
    const [fill, half, line, marker] = await pyqgis([
      { op: 'load', layer: layers.fill(), qml: await write('load-fill', VECTOR_CASES.fill) },
      { op: 'load', layer: layers.fill(), qml: await write('load-half', VECTOR_CASES.halfFill) },
      { op: 'load', layer: layers.line(), qml: await write('load-line', VECTOR_CASES.line) },
      { op: 'load', layer: layers.marker(), qml: await write('load-marker', VECTOR_CASES.marker) },
    ]);
    assert.equal(fill?.ok, true, fill?.message);
    assert.deepEqual(
      { ...fill?.properties, properties: undefined },
      {
        renderer: 'singleSymbol',
        symbol: 'fill',
        class: 'SimpleFill',
        opacity: 1,
        symbol_layers: 1,
        properties: undefined,
      },
    );
    const fillProperties = fill?.properties?.['properties'] as Record<string, string>;
    assert.equal(fillProperties['color'], '0,187,187,255');
    assert.equal(fillProperties['outline_width'], '1.5');
    assert.equal(fillProperties['outline_color'], '255,0,0,255');
    assert.equal(half?.properties?.['opacity'], 0.5);
    assert.equal((half?.properties?.['properties'] as Record<string, string>)['outline_style'], 'no');
    const lineProperties = line?.properties?.['properties'] as Record<string, string>;
    assert.deepEqual(
      [lineProperties['line_color'], lineProperties['line_width'], lineProperties['line_style']],
      ['255,0,255,255', '2', 'dash'],
    );
    const markerProperties = marker?.properties?.['properties'] as Record<string, string>;
    assert.deepEqual(
      [markerProperties['color'], markerProperties['size'], markerProperties['name']],
      ['0,255,0,255', '6', 'square'],
    );
    assert.equal(markerProperties['outline_color'], '0,0,255,128');
  });

  test('QGIS loads each raster QML and holds bands, contrast enhancement, limits and filters', async () => {
    const [user, minmax, colour] = await pyqgis([
      {
        op: 'load',
        layer: layers.gray(),
        qml: await write(
          'load-gray',
          gray({ algorithm: 'StretchToMinimumMaximum', limits_min_max: 'UserDefined', min: 5, max: 60 }),
        ),
      },
      {
        op: 'load',
        layer: layers.gray(),
        qml: await write('load-gray-minmax', gray({ algorithm: 'StretchToMinimumMaximum', limits_min_max: 'MinMax' }), {
          bandStatistics: GRAY_STATISTICS,
        }),
      },
      {
        op: 'load',
        layer: layers.rgb(),
        qml: await write(
          'load-rgb',
          rgb([3, 2, 1], 'UserDefined', { brightness: 10, contrast: 20, gamma: 1.5, saturation: -30 }),
        ),
      },
    ]);
    assert.equal(user?.ok, true, user?.message);
    assert.deepEqual(user?.properties, {
      renderer: 'singlebandgray',
      limits: 'None',
      brightness: 0,
      contrast: 0,
      gamma: 1,
      saturation: 0,
      bands: { gray: 1 },
      enhancements: { gray: { algorithm: 'StretchToMinimumMaximum', min: 5, max: 60 } },
    });
    assert.equal(minmax?.properties?.['limits'], 'MinMax');
    assert.deepEqual(minmax?.properties?.['enhancements'], {
      gray: { algorithm: 'StretchToMinimumMaximum', min: 0, max: 95 },
    });
    const enhancement = { algorithm: 'NoEnhancement', min: 0, max: 255 };
    assert.deepEqual(colour?.properties, {
      renderer: 'multibandcolor',
      limits: 'None',
      brightness: 10,
      contrast: 20,
      gamma: 1.5,
      saturation: -30,
      bands: { red: 3, green: 2, blue: 1 },
      enhancements: { red: enhancement, green: enhancement, blue: enhancement },
    });
  });

  test('QGIS draws vector styles in their colours and opacity', async () => {
    const render = async (name: keyof typeof VECTOR_CASES, points: number[][]) => ({
      op: 'render',
      layer: layers[VECTOR_CASES[name].symbology.symbol](),
      qml: await write(`render-${name}`, VECTOR_CASES[name]),
      extent: EXTENT,
      points,
    });
    const results = await pyqgis([
      await render('fill', [CENTRE, [0.5, 0.5]]),
      await render('halfFill', [CENTRE]),
      await render('line', [CENTRE, [5, 9]]),
      await render('marker', [CENTRE, [1, 1]]),
    ]);
    const clear: Rgba = [0, 0, 0, 0];
    assertPixels(results, [
      [[0, 187, 187, 255], clear],
      [[0, 187, 187, 128]],
      [[255, 0, 255, 255], clear],
      [[0, 255, 0, 255], clear],
    ]);
  });

  test('QGIS draws raster styles: band order swaps channels, user limits change grey levels', async () => {
    const render = async (name: string, style: Style, layer: object, facts: Partial<QmlContext> = {}) => ({
      op: 'render',
      layer,
      qml: await write(`render-${name}`, style, facts),
      extent: EXTENT,
      points: [VALUE_25, [9.75, 5]],
    });
    const results = await pyqgis([
      await render('rgb-123', rgb([1, 2, 3], 'MinMax'), layers.rgb(), { bandStatistics: RGB_STATISTICS }),
      await render('rgb-321', rgb([3, 2, 1], 'UserDefined'), layers.rgb()),
      await render(
        'gray-100',
        gray({ algorithm: 'StretchToMinimumMaximum', limits_min_max: 'UserDefined', min: 0, max: 100 }),
        layers.gray(),
      ),
      await render(
        'gray-50',
        gray({ algorithm: 'StretchToMinimumMaximum', limits_min_max: 'UserDefined', min: 0, max: 50 }),
        layers.gray(),
      ),
      await render(
        'gray-minmax',
        gray({ algorithm: 'StretchToMinimumMaximum', limits_min_max: 'MinMax' }),
        layers.gray(),
        {
          bandStatistics: GRAY_STATISTICS,
        },
      ),
    ]);
    const white: Rgba = [255, 255, 255, 255];
    assertPixels(results, [
      [[10, 100, 200, 255]],
      [[200, 100, 10, 255]],
      [[64, 64, 64, 255]],
      [[128, 128, 128, 255], white],
      [[67, 67, 67, 255], white],
    ]);
  });

  const classed = () => ({ kind: 'vector', source: `${directory}/vector.gpkg|layername=classes` });
  /** The classes layer's points (y = 5): kind a, pop 5; kind b, pop 15; kind z, pop 25. */
  const CLASSED_POINTS = [
    [2, 5],
    [5, 5],
    [8, 5],
  ];
  const MARKER = { size: 6, outline_style: 'no' };

  const CLASSED_CASES = {
    categorized: {
      type: 'vector',
      name: 'by-kind',
      rendering: { opacity: 1 },
      symbology: {
        type: 'categorized',
        symbol: 'marker',
        properties: MARKER,
        field: 'kind',
        categories: [
          { value: 'a', label: 'Kind A', colour: '#FF0000' },
          { value: 'b', label: 'Kind B', colour: '0,0,255,255' },
        ],
        other: { label: 'other', colour: '#00FF00' },
      },
    },
    graduated: {
      type: 'vector',
      name: 'by-pop',
      rendering: { opacity: 1 },
      symbology: {
        type: 'graduated',
        symbol: 'marker',
        properties: MARKER,
        field: 'pop',
        ranges: [
          { lower: 0, upper: 10, label: 'few', colour: '#FFFF00' },
          { lower: 10, upper: 20.5, label: 'some', colour: '#FF00FF' },
          { lower: 20.5, upper: 30, label: 'many', colour: '#00FFFF' },
        ],
      },
    },
  } satisfies Record<string, VectorStyle>;

  const PSEUDOCOLOR_CASES = {
    interpolated: pseudocolor('INTERPOLATED'),
    discrete: pseudocolor('DISCRETE'),
    exact: pseudocolor('EXACT'),
  };

  /** The oracle's arguments for a categorized or graduated style: its classes as QGIS takes them. */
  function classesReference(style: VectorStyle) {
    const symbology = style.symbology;
    if (symbology.type === 'single_symbol') throw new Error('not a classed style');
    const properties = Object.fromEntries(Object.entries(symbology.properties ?? {}).map(([k, v]) => [k, String(v)]));
    const classes =
      symbology.type === 'categorized'
        ? [
            ...symbology.categories.map((c) => ({
              value: String(c.value),
              label: c.label,
              colour: qgisColour(c.colour, 'c'),
            })),
            { value: '', label: symbology.other?.label, colour: qgisColour(symbology.other?.colour ?? '', 'o') },
          ]
        : symbology.ranges.map((r) => ({ ...r, colour: qgisColour(r.colour, 'r') }));
    return { renderer: symbology.type, symbol: symbology.symbol, field: symbology.field, properties, classes };
  }

  test('categorized, graduated and pseudocolor styles read back from their QML are the style', () => {
    for (const style of [...Object.values(CLASSED_CASES), ...Object.values(PSEUDOCOLOR_CASES)] as Style[]) {
      const qml = styleToQml(parseStyle(style, catalogue), { catalogue });
      const read = qmlToStyle(qml, style.name, catalogue);
      assert.equal(styleToQml(read, { catalogue }), qml, style.name);
      if (read.type === 'raster') assert.deepEqual(read, style);
    }
    const read = qmlToStyle(styleToQml(CLASSED_CASES.categorized, { catalogue }), 'by-kind', catalogue) as VectorStyle;
    assert.equal(read.symbology.type, 'categorized');
    if (read.symbology.type !== 'categorized') return;
    assert.deepEqual(read.symbology.categories, [
      { value: 'a', label: 'Kind A', colour: '#FF0000' },
      { value: 'b', label: 'Kind B', colour: '#0000FF' },
    ]);
    assert.deepEqual(read.symbology.other, { label: 'other', colour: '#00FF00' });
    assert.equal(read.symbology.properties?.['size'], 6);
    assert.equal(read.symbology.properties?.['color'], undefined, 'the class colour is not a shared property');
  });

  test('Steward writes the QML QGIS writes for categorized, graduated and pseudocolor renderers', async () => {
    const vectors = await Promise.all(
      Object.entries(CLASSED_CASES).map(async ([name, style]) => ({
        op: 'reference_classes',
        layer: classed(),
        ...classesReference(style),
        opacity: 1,
        save: join(directory, `${name}-reference.qml`),
        steward: await write(name, style),
      })),
    );
    const rasters = await Promise.all(
      Object.entries(PSEUDOCOLOR_CASES).map(async ([name, style]) => {
        const { band, min, max, interpolation, stops } = style.symbology.properties;
        const rgba = (colour: string) => qgisColour(colour, 'stop').split(',').map(Number);
        return {
          op: 'reference_pseudocolor',
          layer: layers.gray(),
          ...{ band, min, max, interpolation },
          stops: stops.map((stop) => ({ value: stop.value, label: stop.label, rgba: rgba(stop.colour) })),
          save: join(directory, `pseudocolor-${name}-reference.qml`),
          steward: await write(`pseudocolor-${name}`, style),
        };
      }),
    );
    const results = await pyqgis([...vectors, ...rasters]);
    results.forEach((result) => assert.equal(result.ok, true, result.message));
    await assertSameXml([...vectors, ...rasters]);
  });

  test('QGIS describes back as JSON the classed styles it wrote, which write the same QML again', async () => {
    for (const name of Object.keys(CLASSED_CASES)) {
      const reference = await readFile(join(directory, `${name}-reference.qml`), 'utf8');
      const described = describeQml(reference, name, catalogue);
      const ours = styleToQml(parseStyle(described, catalogue), { catalogue });
      assert.deepEqual(comparableXml(ours), comparableXml(reference), name);
    }
  });

  test('QGIS draws each class in its colour, other values in the "other" colour', async () => {
    const render = async (name: keyof typeof CLASSED_CASES) => ({
      op: 'render',
      layer: classed(),
      qml: await write(`render-${name}`, CLASSED_CASES[name]),
      extent: EXTENT,
      points: CLASSED_POINTS,
    });
    const results = await pyqgis([await render('categorized'), await render('graduated')]);
    assertPixels(results, [
      [
        [255, 0, 0, 255],
        [0, 0, 255, 255],
        [0, 255, 0, 255],
      ],
      [
        [255, 255, 0, 255],
        [255, 0, 255, 255],
        [0, 255, 255, 255],
      ],
    ]);
  });

  test('QGIS draws a pseudocolor ramp as interpolated, discrete or exact classes', async () => {
    // Gray values 25 (column 5) and 50 (column 10); the stops are 0 black, 50 white, 95 red.
    const points = [VALUE_25, [5.25, 5]];
    const results = await pyqgis(
      await Promise.all(
        Object.entries(PSEUDOCOLOR_CASES).map(async ([name, style]) => ({
          op: 'render',
          layer: layers.gray(),
          qml: await write(`render-pseudocolor-${name}`, style),
          extent: EXTENT,
          points,
        })),
      ),
    );
    const clear: Rgba = [0, 0, 0, 0];
    assertPixels(results, [
      [
        [128, 128, 128, 255],
        [255, 255, 255, 255],
      ],
      [
        [255, 255, 255, 255],
        [255, 255, 255, 255],
      ],
      [clear, [255, 255, 255, 255]],
    ]);
  });
});
