/** Vector styles as the `renderer-v2` and rendering elements QGIS 3.22 writes in a QML. */
import { Unprocessable } from '../../errors.js';
import { formatNumber } from '../layer.js';
import type { SymbolKind, SymbologyCatalogue } from '../symbology/catalogue.js';
import { childElements, element, firstChild, path, textContent, textElement, type XmlElement } from '../xml/node.js';
import { qgisColour, styleColour } from './colour.js';
import type { VectorStyle } from './schema.js';
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

/** Every property of the symbol layer: the catalogue's defaults overlaid with the style's values. */
function symbolLayerProperties(style: VectorStyle, catalogue: SymbologyCatalogue): Record<string, string> {
  const known = catalogue.symbolLayer(style.symbology.symbol).properties;
  const values: Record<string, string> = {};
  // Colours in the r,g,b,a form every release reads, whatever form the catalogue's QGIS wrote.
  for (const [key, property] of Object.entries(known)) {
    values[key] = property.colour ? qgisColour(property.default, key) : property.default;
  }
  for (const [key, value] of Object.entries(style.symbology.properties ?? {})) {
    const text = typeof value === 'number' ? formatNumber(value) : value;
    values[key] = known[key]?.colour ? qgisColour(text, key) : text;
  }
  return values;
}

function symbolElement(style: VectorStyle, catalogue: SymbologyCatalogue): XmlElement {
  const properties = symbolLayerProperties(style, catalogue);
  const props = Object.keys(properties)
    .sort()
    .map((k) => element('prop', { k, v: properties[k] ?? '' }));
  const layer = element(
    'layer',
    { class: catalogue.symbolLayer(style.symbology.symbol).class, enabled: '1', locked: '0', pass: '0' },
    [optionMap(properties), ...props, emptyDataDefined('data_defined_properties')],
  );
  const attributes = { type: style.symbology.symbol, name: '0', alpha: '1', clip_to_extent: '1', force_rhr: '0' };
  return element('symbol', attributes, [emptyDataDefined('data_defined_properties'), layer]);
}

/**
 * The elements a vector style puts in a `<maplayer>` (and a QML): `renderer-v2`, `blendMode`,
 * `featureBlendMode`, `layerOpacity`.
 */
export function vectorStyleElements(style: VectorStyle, catalogue: SymbologyCatalogue): XmlElement[] {
  const renderer = element(
    'renderer-v2',
    { type: 'singleSymbol', forceraster: '0', symbollevels: '0', enableorderby: '0', referencescale: '-1' },
    [element('symbols', {}, [symbolElement(style, catalogue)]), element('rotation'), element('sizescale')],
  );
  const opacity = style.rendering?.opacity ?? catalogue.vectorRendering.opacity;
  return [
    renderer,
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

function singleSymbol(root: XmlElement): XmlElement {
  const renderer = firstChild(root, 'renderer-v2');
  if (renderer?.attributes.get('type') !== 'singleSymbol') {
    throw new Unprocessable(
      `the style's renderer is ${renderer?.attributes.get('type') ?? 'missing'}, not singleSymbol`,
    );
  }
  const symbols = childElements(path(renderer, 'symbols') ?? renderer, 'symbol');
  const symbol = symbols[0];
  const layers = symbol ? childElements(symbol, 'layer') : [];
  if (!symbol || symbols.length !== 1 || layers.length !== 1) {
    throw new Unprocessable('the style must hold one symbol with one symbol layer');
  }
  return symbol;
}

/** Reads a vector QML root (`<qgis>` or `<maplayer>`) back into the style body that made it. */
export function readVectorStyle(root: XmlElement, name: string, catalogue: SymbologyCatalogue): VectorStyle {
  const symbol = singleSymbol(root);
  const kind = symbol.attributes.get('type') as SymbolKind;
  if (!['marker', 'line', 'fill'].includes(kind)) throw new Unprocessable(`unsupported symbol type "${kind}"`);
  const layer = firstChild(symbol, 'layer') as XmlElement;
  const expected = catalogue.symbolLayer(kind);
  if (layer.attributes.get('class') !== expected.class) {
    throw new Unprocessable(
      `the ${kind} symbol layer is ${layer.attributes.get('class') ?? 'unnamed'}, not ${expected.class}`,
    );
  }
  const known = expected.properties;
  const raw = readOptionMap(layer);
  const properties: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(raw)) properties[key] = styleValue(value, known[key]?.colour === true);
  const opacityElement = firstChild(root, 'layerOpacity');
  const opacity = opacityElement ? Number(textContent(opacityElement)) : catalogue.vectorRendering.opacity;
  return {
    type: 'vector',
    name,
    rendering: { opacity },
    symbology: { type: 'single_symbol', symbol: kind, properties },
  };
}

/** `layerGeometryType` of a QML for a symbol kind (QgsWkbTypes::GeometryType). */
export function geometryTypeOf(symbol: SymbolKind, catalogue: SymbologyCatalogue): string {
  return String(catalogue.symbolLayer(symbol).geometry_type);
}
