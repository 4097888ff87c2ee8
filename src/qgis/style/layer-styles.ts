/**
 * A layer's styles inside its `<maplayer>`, kept as QGIS keeps them: the current style's elements
 * are children of the `<maplayer>` and its `<map-layer-style name="x"/>` entry is empty; every
 * other style is a `<map-layer-style name="y">` holding a whole `<qgis>` style document.
 */
import { Conflict, NotFound, Unprocessable } from '../../errors.js';
import { geometryClass } from '../geometry.js';
import {
  appendChild,
  childElements,
  element,
  firstChild,
  indent,
  removeChild,
  text,
  textContent,
  type XmlElement,
  type XmlNode,
} from '../xml/node.js';
import { parseQml, STYLE_CATEGORIES } from './qml.js';

/** Elements of a `<maplayer>` that belong to its current style, by layer type. */
const STYLE_ELEMENTS: Record<string, readonly string[]> = {
  vector: [
    'renderer-v2',
    'labeling',
    'blendMode',
    'featureBlendMode',
    'layerOpacity',
    'SingleCategoryDiagramRenderer',
    'LinearlyInterpolatedDiagramRenderer',
    'StackedDiagramRenderer',
    'DiagramLayerSettings',
  ],
  raster: ['pipe-data-defined-properties', 'pipe', 'blendMode'],
};
/** `<maplayer>` attributes of the Rendering category, which a style switch must carry over. */
const RENDERING_ATTRIBUTES = [
  'hasScaleBasedVisibilityFlag',
  'maxScale',
  'minScale',
  'simplifyAlgorithm',
  'simplifyDrawingHints',
  'simplifyDrawingTol',
  'simplifyLocal',
  'simplifyMaxScale',
  'symbologyReferenceScale',
];
/** `<maplayer>` attributes that belong to the current style (QGIS reads them with its elements). */
const STYLE_ATTRIBUTES: Record<string, Record<string, string>> = { vector: { labelsEnabled: '0' }, raster: {} };
/** Depth of `<maplayer>` in a .qgs: qgis > projectlayers > maplayer. */
const MAPLAYER_DEPTH = 2;

function styleNamesOf(mapLayer: XmlElement): readonly string[] {
  const names = STYLE_ELEMENTS[mapLayer.attributes.get('type') ?? ''];
  if (!names)
    throw new Unprocessable(`a ${mapLayer.attributes.get('type') ?? 'typeless'} layer has no styles Steward manages`);
  return names;
}

/** Sets the layer's style attributes from a style document, or to QGIS's defaults where it has none. */
function takeStyleAttributes(mapLayer: XmlElement, document: XmlElement): void {
  const defaults = STYLE_ATTRIBUTES[mapLayer.attributes.get('type') ?? ''] ?? {};
  for (const [name, fallback] of Object.entries(defaults)) {
    mapLayer.attributes.set(name, document.attributes.get(name) ?? fallback);
  }
}

function isBlank(node: XmlNode | undefined): boolean {
  return node?.kind === 'text' && node.value.trim() === '';
}

/** Indents a copy of `source` for `depth`, dropping the indentation it had elsewhere. */
function placed(source: XmlElement, depth: number): XmlElement {
  const strip = (node: XmlElement): XmlElement => {
    const hasElements = node.children.some((child) => child.kind === 'element');
    const children = hasElements ? node.children.filter((child) => !isBlank(child)) : node.children;
    return {
      ...node,
      attributes: new Map(node.attributes),
      children: children.map((c) => (c.kind === 'element' ? strip(c) : { ...c })),
    };
  };
  return indent(strip(source), depth);
}

function manager(mapLayer: XmlElement): XmlElement {
  const existing = firstChild(mapLayer, 'map-layer-style-manager');
  if (existing) return existing;
  const created = element('map-layer-style-manager', { current: 'default' }, [
    element('map-layer-style', { name: 'default' }),
  ]);
  appendChild(mapLayer, placed(created, MAPLAYER_DEPTH + 1), MAPLAYER_DEPTH);
  return created;
}

function entries(mapLayer: XmlElement): XmlElement[] {
  return childElements(manager(mapLayer), 'map-layer-style');
}

function entry(mapLayer: XmlElement, name: string): XmlElement | undefined {
  return entries(mapLayer).find((candidate) => (candidate.attributes.get('name') ?? '') === name);
}

/** The names of the layer's styles, in the order QGIS lists them. */
export function layerStyleNames(mapLayer: XmlElement): string[] {
  return entries(mapLayer).map((candidate) => candidate.attributes.get('name') ?? '');
}

export function currentLayerStyleName(mapLayer: XmlElement): string {
  return manager(mapLayer).attributes.get('current') ?? '';
}

/** Replaces the layer's current style elements with `elements`, where the old ones were. */
function replaceStyleElements(mapLayer: XmlElement, elements: XmlElement[]): void {
  const owned = new Set(styleNamesOf(mapLayer));
  const kept: XmlNode[] = [];
  let insertAt = -1;
  for (const node of mapLayer.children) {
    if (node.kind === 'element' && owned.has(node.name)) {
      if (isBlank(kept[kept.length - 1])) kept.pop();
      if (insertAt < 0) insertAt = kept.length;
      continue;
    }
    kept.push(node);
  }
  if (insertAt < 0) insertAt = isBlank(kept[kept.length - 1]) ? kept.length - 1 : kept.length;
  const indentation = '\n' + '  '.repeat(MAPLAYER_DEPTH + 1);
  const fresh = elements.flatMap((child) => [text(indentation), placed(child, MAPLAYER_DEPTH + 1)]);
  kept.splice(insertAt, 0, ...fresh);
  mapLayer.children = kept;
}

function styleChildren(root: XmlElement, names: readonly string[]): XmlElement[] {
  return childElements(root).filter((child) => names.includes(child.name));
}

/** The layer's current style as the `<qgis>` document QGIS keeps for a style that is not current. */
function currentStyleDocument(mapLayer: XmlElement, version: string): XmlElement {
  const attributes: Record<string, string> = { version, styleCategories: STYLE_CATEGORIES };
  const own = Object.keys(STYLE_ATTRIBUTES[mapLayer.attributes.get('type') ?? ''] ?? {});
  for (const name of [...RENDERING_ATTRIBUTES, ...own]) {
    const value = mapLayer.attributes.get(name);
    if (value !== undefined) attributes[name] = value;
  }
  const children = styleChildren(mapLayer, styleNamesOf(mapLayer));
  const geometry = geometryClass('layer', mapLayer.attributes.get('geometry'))?.code;
  if (geometry !== undefined) children.push(element('layerGeometryType', {}, [text(geometry)]));
  return element('qgis', attributes, children);
}

function setEntryDocument(target: XmlElement, document: XmlElement | undefined): void {
  const depth = MAPLAYER_DEPTH + 2;
  target.children = document
    ? [text('\n' + '  '.repeat(depth + 1)), placed(document, depth + 1), text('\n' + '  '.repeat(depth))]
    : [];
}

/** Fails when a QML cannot draw this layer: raster style on a vector, polygon symbol on points... */
function checkFits(mapLayer: XmlElement, qml: XmlElement, name: string): void {
  const layerType = mapLayer.attributes.get('type');
  const styleType = firstChild(qml, 'pipe') ? 'raster' : 'vector';
  if (layerType !== styleType)
    throw new Unprocessable(`the style "${name}" is a ${styleType} style and the layer is ${layerType}`);
  const styleGeometry = textContent(firstChild(qml, 'layerGeometryType'));
  const layerGeometry = geometryClass('layer', mapLayer.attributes.get('geometry'))?.code;
  if (styleGeometry !== '' && layerGeometry !== undefined && styleGeometry !== layerGeometry) {
    const kind = geometryClass('code', styleGeometry)?.layer ?? styleGeometry;
    throw new Unprocessable(
      `the style "${name}" draws ${kind} geometries and the layer has ${mapLayer.attributes.get('geometry')} geometries`,
    );
  }
}

/** The layer's rendering attributes on a style document, so switching styles keeps them. */
function withLayerRendering(qml: XmlElement, mapLayer: XmlElement): XmlElement {
  const attributes = new Map(qml.attributes);
  for (const name of RENDERING_ATTRIBUTES) {
    const value = mapLayer.attributes.get(name);
    if (value !== undefined && attributes.has(name)) attributes.set(name, value);
  }
  return { ...qml, attributes };
}

/** Makes an existing style the current one: its elements move into the `<maplayer>`. */
export function setCurrentLayerStyle(mapLayer: XmlElement, name: string): void {
  const target = entry(mapLayer, name);
  if (!target) throw new NotFound(`the layer has no style "${name}"`);
  const previousName = currentLayerStyleName(mapLayer);
  if (previousName === name) return;
  const document = firstChild(target, 'qgis');
  if (!document) throw new Unprocessable(`the layer's style "${name}" holds no style document`);
  const previous = entry(mapLayer, previousName);
  if (previous) setEntryDocument(previous, currentStyleDocument(mapLayer, document.attributes.get('version') ?? ''));
  replaceStyleElements(mapLayer, styleChildren(document, styleNamesOf(mapLayer)));
  takeStyleAttributes(mapLayer, document);
  setEntryDocument(target, undefined);
  manager(mapLayer).attributes.set('current', name);
}

/**
 * Adds the style `name` to the layer from its QML (as written by styleToQml), or replaces the
 * style of that name; with `current` it becomes the style QGIS Server draws when STYLE is empty.
 * Throws Unprocessable when the style cannot draw this layer.
 */
export function putLayerStyle(mapLayer: XmlElement, name: string, qml: string, current: boolean): void {
  const document = parseQml(qml, name);
  checkFits(mapLayer, document, name);
  const existing = entry(mapLayer, name);
  if (existing && currentLayerStyleName(mapLayer) === name) {
    replaceStyleElements(mapLayer, styleChildren(document, styleNamesOf(mapLayer)));
    takeStyleAttributes(mapLayer, document);
    return;
  }
  const target = existing ?? element('map-layer-style', { name });
  setEntryDocument(target, withLayerRendering(document, mapLayer));
  if (!existing) appendChild(manager(mapLayer), target, MAPLAYER_DEPTH + 1);
  if (current) setCurrentLayerStyle(mapLayer, name);
}

/** Removes a style that is not the current one; Conflict for the current style, NotFound if absent. */
export function removeLayerStyle(mapLayer: XmlElement, name: string): void {
  const target = entry(mapLayer, name);
  if (!target) throw new NotFound(`the layer has no style "${name}"`);
  if (currentLayerStyleName(mapLayer) === name) {
    throw new Conflict(`the style "${name}" is the layer's current style; make another style current first`);
  }
  removeChild(manager(mapLayer), target);
}
