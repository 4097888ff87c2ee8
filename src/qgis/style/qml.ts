/** Styles as QML documents: what Steward writes for a style, and how it reads one back. */
import { Unprocessable } from '../../errors.js';
import type { SymbologyCatalogue } from '../symbology/catalogue.js';
import { childElements, element, firstChild, indent, text, textElement, type XmlElement } from '../xml/node.js';
import { parseXml, XmlSyntaxError } from '../xml/parse.js';
import { serializeXml } from '../xml/serialize.js';
import {
  RASTER_RENDERING_ATTRIBUTES,
  type RasterLayerFacts,
  rasterStyleElements,
  readRasterStyle,
} from './raster-qml.js';
import type { Style } from './schema.js';
import { geometryTypeOf, readVectorStyle, VECTOR_RENDERING_ATTRIBUTES, vectorStyleElements } from './vector-qml.js';

/** What a style needs besides its body: the catalogue of the QGIS that reads it, and the layer's facts. */
export interface QmlContext extends RasterLayerFacts {
  readonly catalogue: SymbologyCatalogue;
}

/** The style categories a Steward QML holds (QGIS's flag names). */
export const STYLE_CATEGORIES = 'Symbology|Rendering';
const DOCTYPE = "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>";

/**
 * The elements of a style as they sit in a `<maplayer>` for its current style: `renderer-v2`,
 * `blendMode`, `featureBlendMode`, `layerOpacity` (vector) or `pipe-data-defined-properties`,
 * `pipe`, `blendMode` (raster). Not indented.
 */
export function styleElements(style: Style, context: QmlContext): XmlElement[] {
  if (style.type === 'vector') return vectorStyleElements(style, context.catalogue);
  return rasterStyleElements(style, context.catalogue, context);
}

/** The `<qgis>` root of the style's QML, as QGIS writes it with the Symbology and Rendering categories. Not indented. */
export function styleQmlRoot(style: Style, context: QmlContext): XmlElement {
  const head = { version: context.catalogue.qgisVersion, styleCategories: STYLE_CATEGORIES };
  if (style.type === 'vector') {
    const geometry = geometryTypeOf(style.symbology.symbol, context.catalogue);
    return element('qgis', { ...head, ...VECTOR_RENDERING_ATTRIBUTES }, [
      ...styleElements(style, context),
      textElement('layerGeometryType', geometry),
    ]);
  }
  return element('qgis', { ...head, ...RASTER_RENDERING_ATTRIBUTES }, styleElements(style, context));
}

/** The QML document of a style, indented as QGIS writes it. */
export function styleToQml(style: Style, context: QmlContext): string {
  const root = indent(styleQmlRoot(style, context), 0);
  return serializeXml({ prolog: [{ kind: 'raw', markup: DOCTYPE }, text('\n')], root });
}

/** Reads a style back from a `<qgis>` QML root or a `<maplayer>`, whichever holds the style elements. */
export function styleFromElement(root: XmlElement, name: string, catalogue: SymbologyCatalogue): Style {
  if (firstChild(root, 'renderer-v2')) return readVectorStyle(root, name, catalogue);
  if (firstChild(root, 'pipe')) return readRasterStyle(root, name, catalogue);
  throw new Unprocessable(`the style "${name}" holds neither a vector renderer nor a raster pipe`);
}

/** Parses a QML document. */
export function parseQml(qml: string, name: string): XmlElement {
  try {
    const { root } = parseXml(qml);
    if (root.name !== 'qgis')
      throw new Unprocessable(`the style "${name}" is not a QML document (its root is <${root.name}>)`);
    return root;
  } catch (error) {
    if (error instanceof XmlSyntaxError)
      throw new Unprocessable(`the style "${name}" is not well-formed XML: ${error.message}`);
    throw error;
  }
}

/** The style body a QML was made from (in its canonical form: every property, colours as #RRGGBB). */
export function qmlToStyle(qml: string, name: string, catalogue: SymbologyCatalogue): Style {
  return styleFromElement(parseQml(qml, name), name, catalogue);
}

const DIAGRAM_RENDERERS = [
  'SingleCategoryDiagramRenderer',
  'LinearlyInterpolatedDiagramRenderer',
  'StackedDiagramRenderer',
];

/** What a QML draws that the JSON styles do not hold: labels, diagrams. */
function undescribed(root: XmlElement): string | undefined {
  if (root.attributes.get('labelsEnabled') === '1') return 'labels';
  const diagrams = DIAGRAM_RENDERERS.flatMap((name) => {
    const renderer = firstChild(root, name);
    return renderer ? childElements(renderer, 'DiagramCategory') : [];
  });
  return diagrams.some((category) => category.attributes.get('enabled') === '1') ? 'diagrams' : undefined;
}

/**
 * A QML (as QGIS Desktop writes it, say) as the JSON style that draws the same, for an editor to
 * start from; Unprocessable saying what the JSON styles cannot hold.
 */
export function describeQml(qml: string, name: string, catalogue: SymbologyCatalogue): Style {
  const root = parseQml(qml, name);
  const extra = undescribed(root);
  try {
    if (extra) throw new Unprocessable(`it has ${extra}`);
    return styleFromElement(root, name, catalogue);
  } catch (error) {
    if (!(error instanceof Unprocessable)) throw error;
    throw new Unprocessable(`the style "${name}" cannot be described as a JSON style: ${error.message}`);
  }
}
