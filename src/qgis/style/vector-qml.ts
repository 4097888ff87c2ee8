/** Vector styles as the `renderer-v2` and rendering elements QGIS 3.22 writes in a QML. */
import { Unprocessable } from '../../errors.js';
import { formatNumber } from '../layer.js';
import type { SymbolKind, SymbologyCatalogue } from '../symbology/catalogue.js';
import { childElements, element, firstChild, path, textContent, textElement, type XmlElement } from '../xml/node.js';
import { qgisColour, styleColour } from './colour.js';
import type { Categorized, Category, Graduated, Range, VectorStyle, VectorSymbology } from './schema.js';
import { emptyDataDefined, optionMap, readOptionMap } from './xml.js';

/** Root attributes of a vector QML for the Rendering category, at QGIS's defaults. */
export const VECTOR_RENDERING_ATTRIBUTES = {
  hasScaleBasedVisibilityFlag: '0',
  maxScale: '0',
  minScale: '100000000',
  simplifyAlgorithm: '0',
  simplifyDrawingHints: '1',
  simplifyDrawingTol: '1',
  simplifyLocal: '1',
  simplifyMaxScale: '1',
  symbologyReferenceScale: '-1',
};

/** The property `QgsSymbol::setColor` sets on a simple symbol layer: each class's own colour. */
export const CLASS_COLOUR: Readonly<Record<SymbolKind, string>> = {
  marker: 'color',
  line: 'line_color',
  fill: 'color',
};

/** A category's value as QGIS writes it (and matches it, as a string). */
export function categoryValue(value: string | number): string {
  return typeof value === 'number' ? formatNumber(value) : value;
}

type SymbolProperties = Record<string, string | number>;

/** Every property of the symbol layer: the catalogue's defaults overlaid with the style's values. */
function symbolLayerProperties(
  symbol: SymbolKind,
  given: SymbolProperties,
  catalogue: SymbologyCatalogue,
): Record<string, string> {
  const known = catalogue.symbolLayer(symbol).properties;
  const values: Record<string, string> = {};
  // Colours in the r,g,b,a form every release reads, whatever form the catalogue's QGIS wrote.
  for (const [key, property] of Object.entries(known)) {
    values[key] = property.colour ? qgisColour(property.default, key) : property.default;
  }
  for (const [key, value] of Object.entries(given)) {
    const text = typeof value === 'number' ? formatNumber(value) : value;
    values[key] = known[key]?.colour ? qgisColour(text, key) : text;
  }
  return values;
}

function symbolElement(
  symbol: SymbolKind,
  given: SymbolProperties,
  name: string,
  catalogue: SymbologyCatalogue,
): XmlElement {
  const properties = symbolLayerProperties(symbol, given, catalogue);
  const props = Object.keys(properties)
    .sort()
    .map((k) => element('prop', { k, v: properties[k] ?? '' }));
  const layer = element('layer', { class: catalogue.symbolLayer(symbol).class, enabled: '1', locked: '0', pass: '0' }, [
    optionMap(properties),
    ...props,
    emptyDataDefined('data_defined_properties'),
  ]);
  const attributes = { type: symbol, name, alpha: '1', clip_to_extent: '1', force_rhr: '0' };
  return element('symbol', attributes, [emptyDataDefined('data_defined_properties'), layer]);
}

/** The symbols of a renderer's classes, named by their index as QGIS names them: the shared properties in each class's colour. */
function classSymbols(symbology: Categorized | Graduated, colours: string[], catalogue: SymbologyCatalogue) {
  const colourKey = CLASS_COLOUR[symbology.symbol];
  return element(
    'symbols',
    {},
    colours.map((colour, index) =>
      symbolElement(symbology.symbol, { ...symbology.properties, [colourKey]: colour }, String(index), catalogue),
    ),
  );
}

const RENDERER_ATTRIBUTES = { forceraster: '0', symbollevels: '0', enableorderby: '0', referencescale: '-1' };

function categorizedRenderer(symbology: Categorized, catalogue: SymbologyCatalogue): XmlElement {
  const classes = symbology.categories.map(({ value, label, colour }) => {
    const text = categoryValue(value);
    return { value: text, label: label ?? text, colour };
  });
  if (symbology.other) classes.push({ value: '', label: symbology.other.label ?? '', colour: symbology.other.colour });
  const categories = classes.map(({ value, label }, index) =>
    element('category', { symbol: String(index), value, label, render: 'true' }),
  );
  return element('renderer-v2', { type: 'categorizedSymbol', attr: symbology.field, ...RENDERER_ATTRIBUTES }, [
    element('categories', {}, categories),
    classSymbols(
      symbology,
      classes.map((entry) => entry.colour),
      catalogue,
    ),
    element('rotation'),
    element('sizescale'),
  ]);
}

/** A range bound as QGIS writes it: fixed, 15 decimals. */
function rangeBound(value: number): string {
  return value.toFixed(15);
}

/** QGIS's "%1 - %2" label of a range, its bounds with 4 decimals, trailing zeros trimmed. */
function rangeLabel(range: Range): string {
  const bound = (value: number): string => formatNumber(Number(value.toFixed(4)));
  return `${bound(range.lower)} - ${bound(range.upper)}`;
}

function graduatedRenderer(symbology: Graduated, catalogue: SymbologyCatalogue): XmlElement {
  const ranges = symbology.ranges.map((range, index) =>
    element('range', {
      symbol: String(index),
      lower: rangeBound(range.lower),
      upper: rangeBound(range.upper),
      label: range.label ?? rangeLabel(range),
      render: 'true',
    }),
  );
  const classification = element('classificationMethod', { id: 'Custom' }, [
    element('symmetricMode', { enabled: '0', symmetrypoint: '0', astride: '0' }),
    element('labelFormat', { format: '%1 - %2', labelprecision: '4', trimtrailingzeroes: '1' }),
    element('parameters', {}, [element('Option')]),
    element('extraInformation'),
  ]);
  const attributes = { type: 'graduatedSymbol', attr: symbology.field, graduatedMethod: 'GraduatedColor' };
  return element('renderer-v2', { ...attributes, ...RENDERER_ATTRIBUTES }, [
    element('ranges', {}, ranges),
    classSymbols(
      symbology,
      symbology.ranges.map((range) => range.colour),
      catalogue,
    ),
    classification,
    element('rotation'),
    element('sizescale'),
  ]);
}

function rendererElement(symbology: VectorSymbology, catalogue: SymbologyCatalogue): XmlElement {
  if (symbology.type === 'categorized') return categorizedRenderer(symbology, catalogue);
  if (symbology.type === 'graduated') return graduatedRenderer(symbology, catalogue);
  const symbol = symbolElement(symbology.symbol, symbology.properties ?? {}, '0', catalogue);
  return element('renderer-v2', { type: 'singleSymbol', ...RENDERER_ATTRIBUTES }, [
    element('symbols', {}, [symbol]),
    element('rotation'),
    element('sizescale'),
  ]);
}

/**
 * The elements a vector style puts in a `<maplayer>` (and a QML): `renderer-v2`, `blendMode`,
 * `featureBlendMode`, `layerOpacity`.
 */
export function vectorStyleElements(style: VectorStyle, catalogue: SymbologyCatalogue): XmlElement[] {
  const opacity = style.rendering?.opacity ?? catalogue.vectorRendering.opacity;
  return [
    rendererElement(style.symbology, catalogue),
    textElement('blendMode', '0'),
    textElement('featureBlendMode', '0'),
    textElement('layerOpacity', formatNumber(opacity)),
  ];
}

/** QGIS strings back to style values: colours as `#RRGGBB`, plain decimals as numbers. */
function styleValue(value: string, colour: boolean): string | number {
  if (colour) return styleColour(value);
  const number = Number(value);
  return /^-?\d+(\.\d+)?$/.test(value) && String(number) === value ? number : value;
}

/** A symbol of one simple symbol layer of the catalogue's class, read back as its kind and every property. */
function readSymbol(
  symbol: XmlElement,
  catalogue: SymbologyCatalogue,
): { kind: SymbolKind; properties: SymbolProperties } {
  const kind = symbol.attributes.get('type') as SymbolKind;
  if (!['marker', 'line', 'fill'].includes(kind)) throw new Unprocessable(`unsupported symbol type "${kind}"`);
  const layers = childElements(symbol, 'layer');
  const layer = layers[0];
  if (!layer || layers.length !== 1) throw new Unprocessable('each symbol must hold one symbol layer');
  if ((symbol.attributes.get('alpha') ?? '1') !== '1') throw new Unprocessable('a symbol has an opacity of its own');
  const expected = catalogue.symbolLayer(kind);
  if (layer.attributes.get('class') !== expected.class) {
    throw new Unprocessable(
      `the ${kind} symbol layer is ${layer.attributes.get('class') ?? 'unnamed'}, not ${expected.class}`,
    );
  }
  const known = expected.properties;
  const properties: SymbolProperties = {};
  for (const [key, value] of Object.entries(readOptionMap(layer))) {
    properties[key] = styleValue(value, known[key]?.colour === true);
  }
  return { kind, properties };
}

/** The renderer's symbols by name. */
function symbolsByName(renderer: XmlElement): Map<string, XmlElement> {
  const symbols = childElements(path(renderer, 'symbols') ?? renderer, 'symbol');
  return new Map(symbols.map((symbol) => [symbol.attributes.get('name') ?? '', symbol]));
}

interface ReadClass {
  element: XmlElement;
  colour: string;
}

/**
 * The symbol the classes share and each class's colour; Unprocessable when the classes' symbols
 * differ in more than their colour, or a class is switched off.
 */
function readClasses(renderer: XmlElement, classes: XmlElement[], catalogue: SymbologyCatalogue) {
  const symbols = symbolsByName(renderer);
  let shared: { kind: SymbolKind; properties: SymbolProperties } | undefined;
  const read: ReadClass[] = classes.map((entry) => {
    if (entry.attributes.get('render') === 'false') throw new Unprocessable('a class of the style is switched off');
    const symbol = symbols.get(entry.attributes.get('symbol') ?? '');
    if (!symbol)
      throw new Unprocessable(`a class names symbol "${entry.attributes.get('symbol') ?? ''}", which the style lacks`);
    const { kind, properties } = readSymbol(symbol, catalogue);
    const colourKey = CLASS_COLOUR[kind];
    const { [colourKey]: colour, ...rest } = properties;
    if (shared && (shared.kind !== kind || JSON.stringify(shared.properties) !== JSON.stringify(rest))) {
      throw new Unprocessable("the classes' symbols differ in more than their colour");
    }
    shared = { kind, properties: rest };
    return { element: entry, colour: String(colour) };
  });
  if (!shared) throw new Unprocessable('the style has no class');
  return { shared, read };
}

function readCategorized(renderer: XmlElement, catalogue: SymbologyCatalogue): Categorized {
  const entries = childElements(path(renderer, 'categories') ?? renderer, 'category');
  if (entries.some((entry) => childElements(entry).length > 0)) {
    throw new Unprocessable('a category of the style matches a list of values');
  }
  const { shared, read } = readClasses(renderer, entries, catalogue);
  const categories: Category[] = [];
  let other: Categorized['other'];
  for (const { element: entry, colour } of read) {
    const value = entry.attributes.get('value') ?? '';
    const label = entry.attributes.get('label') ?? '';
    if (value === '') other = { label, colour };
    else categories.push({ value, label, colour });
  }
  const field = renderer.attributes.get('attr') ?? '';
  return {
    type: 'categorized',
    symbol: shared.kind,
    properties: shared.properties,
    field,
    categories,
    ...(other ? { other } : {}),
  };
}

function readGraduated(renderer: XmlElement, catalogue: SymbologyCatalogue): Graduated {
  const method = renderer.attributes.get('graduatedMethod') ?? 'GraduatedColor';
  if (method !== 'GraduatedColor') throw new Unprocessable(`the style grades symbols by ${method}, not by colour`);
  const entries = childElements(path(renderer, 'ranges') ?? renderer, 'range');
  const { shared, read } = readClasses(renderer, entries, catalogue);
  const ranges = read.map(({ element: entry, colour }) => ({
    lower: Number(entry.attributes.get('lower')),
    upper: Number(entry.attributes.get('upper')),
    label: entry.attributes.get('label') ?? '',
    colour,
  }));
  const field = renderer.attributes.get('attr') ?? '';
  return { type: 'graduated', symbol: shared.kind, properties: shared.properties, field, ranges };
}

function readSingleSymbol(renderer: XmlElement, catalogue: SymbologyCatalogue): VectorSymbology {
  const symbols = [...symbolsByName(renderer).values()];
  const symbol = symbols[0];
  if (!symbol || symbols.length !== 1) throw new Unprocessable('the style must hold one symbol');
  const { kind, properties } = readSymbol(symbol, catalogue);
  return { type: 'single_symbol', symbol: kind, properties };
}

const READERS: Record<string, (renderer: XmlElement, catalogue: SymbologyCatalogue) => VectorSymbology> = {
  singleSymbol: readSingleSymbol,
  categorizedSymbol: readCategorized,
  graduatedSymbol: readGraduated,
};

/** Reads a vector QML root (`<qgis>` or `<maplayer>`) back into the style body that made it. */
export function readVectorStyle(root: XmlElement, name: string, catalogue: SymbologyCatalogue): VectorStyle {
  const renderer = firstChild(root, 'renderer-v2');
  const type = renderer?.attributes.get('type') ?? 'missing';
  const reader = Object.hasOwn(READERS, type) ? READERS[type] : undefined;
  if (!renderer || !reader) {
    throw new Unprocessable(`the style's renderer is ${type}, not ${Object.keys(READERS).join(', ')}`);
  }
  const symbology = reader(renderer, catalogue);
  const opacityElement = firstChild(root, 'layerOpacity');
  const opacity = opacityElement ? Number(textContent(opacityElement)) : catalogue.vectorRendering.opacity;
  return { type: 'vector', name, rendering: { opacity }, symbology } as VectorStyle;
}

/** `layerGeometryType` of a QML for a symbol kind (QgsWkbTypes::GeometryType). */
export function geometryTypeOf(symbol: SymbolKind, catalogue: SymbologyCatalogue): string {
  return String(catalogue.symbolLayer(symbol).geometry_type);
}
