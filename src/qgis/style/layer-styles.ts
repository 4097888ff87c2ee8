/**
 * A layer's styles inside its `<maplayer>`, kept as QGIS keeps them: the current style's elements
 * are children of the `<maplayer>` and its `<map-layer-style name="x"/>` entry is empty; every
 * other style is a `<map-layer-style name="y">` holding a whole `<qgis>` style document.
 */
import { Conflict, NotFound, Unprocessable } from '../../errors.js';
import { geometryClass } from '../geometry.js';
import { type Layout, layoutOf, lineBreak } from '../xml/layout.js';
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
import { parseQml } from './qml.js';

/**
 * Elements of a `<maplayer>` that belong to its current style, by layer type, with the style
 * category (`QgsMapLayer::StyleCategory`) that brings them.
 */
const STYLE_ELEMENTS: Record<string, ReadonlyMap<string, string>> = {
  vector: new Map([
    ['renderer-v2', 'Symbology'],
    ['labeling', 'Labeling'],
    ['blendMode', 'Symbology'],
    ['featureBlendMode', 'Symbology'],
    ['layerOpacity', 'Symbology'],
    ['SingleCategoryDiagramRenderer', 'Diagrams'],
    ['LinearlyInterpolatedDiagramRenderer', 'Diagrams'],
    ['StackedDiagramRenderer', 'Diagrams'],
    ['DiagramLayerSettings', 'Diagrams'],
    ['expressionfields', 'Fields'],
  ]),
  raster: new Map([
    ['pipe-data-defined-properties', 'Symbology'],
    ['pipe', 'Symbology'],
    ['blendMode', 'Symbology'],
  ]),
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
/** `<maplayer>` attributes that belong to the current style (QGIS reads them with its elements), by category. */
const STYLE_ATTRIBUTES: Record<string, ReadonlyMap<string, string>> = {
  vector: new Map([['labelsEnabled', 'Labeling']]),
  raster: new Map(),
};
/** The categories of the layer's current style kept in its style manager when another becomes current. */
const KEPT_CATEGORIES = 'Symbology|Labeling|Diagrams|Rendering';
/** Depth of `<maplayer>` in a .qgs: qgis > projectlayers > maplayer. */
const MAPLAYER_DEPTH = 2;
/** The name QGIS shows for a style without one (QGIS 2 projects' only style). */
const UNNAMED_STYLE = 'default';

function styleElementsOf(mapLayer: XmlElement): ReadonlyMap<string, string> {
  const names = STYLE_ELEMENTS[mapLayer.attributes.get('type') ?? ''];
  if (!names)
    throw new Unprocessable(`a ${mapLayer.attributes.get('type') ?? 'typeless'} layer has no styles Steward manages`);
  return names;
}

/** The names of the layer's elements that make its current style (none for a type Steward does not style). */
export function styleElementNames(mapLayer: XmlElement): readonly string[] {
  return [...(STYLE_ELEMENTS[mapLayer.attributes.get('type') ?? '']?.keys() ?? [])];
}

/** Whether a style document covers a category: a QML without `styleCategories` (QGIS 2) covers all. */
function covers(document: XmlElement, category: string): boolean {
  const declared = document.attributes.get('styleCategories');
  if (declared === undefined || declared === 'AllStyleCategories') return true;
  return declared.split('|').includes(category);
}

/**
 * Sets the layer's style attributes from a style document that covers their category: to its
 * value where it has one, else away (QGIS then reads the layer's own default, labels on).
 */
function takeStyleAttributes(mapLayer: XmlElement, document: XmlElement): void {
  const attributes = STYLE_ATTRIBUTES[mapLayer.attributes.get('type') ?? ''] ?? new Map<string, string>();
  for (const [name, category] of attributes) {
    if (!covers(document, category)) continue;
    const value = document.attributes.get(name);
    if (value === undefined) mapLayer.attributes.delete(name);
    else if (mapLayer.attributes.get(name) !== value) mapLayer.attributes.set(name, value);
  }
}

/**
 * Sets the layer's Rendering attributes (scale-based visibility, its scales, the symbology
 * reference scale, simplification) to a style document's, as QGIS's "Load Style" does when the
 * document covers that category; one the document lacks goes (QGIS reads its default then).
 */
function takeRendering(mapLayer: XmlElement, document: XmlElement): void {
  if (!covers(document, 'Rendering')) return;
  for (const name of RENDERING_ATTRIBUTES) {
    const value = document.attributes.get(name);
    if (value === undefined) mapLayer.attributes.delete(name);
    else if (mapLayer.attributes.get(name) !== value) mapLayer.attributes.set(name, value);
  }
}

function isBlank(node: XmlNode | undefined): boolean {
  return node?.kind === 'text' && node.value.trim() === '';
}

/** Indents a copy of `source` for `depth` in the layout, dropping the indentation it had elsewhere. */
function placed(source: XmlElement, depth: number, layout: Layout): XmlElement {
  const strip = (node: XmlElement): XmlElement => {
    const hasElements = node.children.some((child) => child.kind === 'element');
    const children = hasElements ? node.children.filter((child) => !isBlank(child)) : node.children;
    return {
      ...node,
      attributes: new Map(node.attributes),
      children: children.map((c) => (c.kind === 'element' ? strip(c) : { ...c })),
    };
  };
  return indent(strip(source), depth, layout);
}

function layoutOfLayer(mapLayer: XmlElement): Layout {
  return layoutOf(mapLayer, MAPLAYER_DEPTH);
}

/** The layer's style manager; one is made when an edit needs it and the layer has none. */
function manager(mapLayer: XmlElement): XmlElement {
  const existing = firstChild(mapLayer, 'map-layer-style-manager');
  if (existing) return existing;
  const layout = layoutOfLayer(mapLayer);
  const created = element('map-layer-style-manager', { current: UNNAMED_STYLE }, [
    element('map-layer-style', { name: UNNAMED_STYLE }),
  ]);
  appendChild(mapLayer, placed(created, MAPLAYER_DEPTH + 1, layout), MAPLAYER_DEPTH, layout);
  return created;
}

function entries(mapLayer: XmlElement): XmlElement[] {
  const existing = firstChild(mapLayer, 'map-layer-style-manager');
  return existing ? childElements(existing, 'map-layer-style') : [];
}

function entry(mapLayer: XmlElement, name: string): XmlElement | undefined {
  return entries(mapLayer).find((candidate) => (candidate.attributes.get('name') ?? '') === name);
}

/** The names of the layer's styles as written, in the order QGIS lists them. */
export function layerStyleNames(mapLayer: XmlElement): string[] {
  return entries(mapLayer).map((candidate) => candidate.attributes.get('name') ?? '');
}

/** The name of the layer's current style as written ('' in QGIS 2 projects). */
export function currentLayerStyleName(mapLayer: XmlElement): string {
  return firstChild(mapLayer, 'map-layer-style-manager')?.attributes.get('current') ?? UNNAMED_STYLE;
}

/** A style name as QGIS shows it: the unnamed style of QGIS 2 projects is "default". */
export function shownStyleName(name: string): string {
  return name === '' ? UNNAMED_STYLE : name;
}

/**
 * The name, as written, of the layer's style that `requested` names as QGIS shows it, in any case
 * ("Default" for the unnamed style of a QGIS 2 project, "DÉFAUT" for "défaut"); undefined when the
 * layer has no such style, or two that differ only in case and neither is named exactly.
 */
export function resolveLayerStyle(mapLayer: XmlElement, requested: string): string | undefined {
  const names = entries(mapLayer).length > 0 ? layerStyleNames(mapLayer) : [currentLayerStyleName(mapLayer)];
  const exact = names.find((name) => shownStyleName(name) === requested);
  if (exact !== undefined) return exact;
  const folded = requested.toLocaleLowerCase();
  const matches = names.filter((name) => shownStyleName(name).toLocaleLowerCase() === folded);
  return matches.length === 1 ? matches[0] : undefined;
}

/**
 * Replaces the layer's current style elements of the document's categories with `elements`, each
 * in the place of the element of its name, so that what a style does not change keeps its place;
 * elements the layer did not have go after the last one replaced.
 */
function replaceStyleElements(mapLayer: XmlElement, document: XmlElement, elements: XmlElement[]): void {
  const owned = styleElementsOf(mapLayer);
  const layout = layoutOfLayer(mapLayer);
  const fresh = new Map<string, XmlElement[]>();
  for (const child of elements) {
    const list = fresh.get(child.name) ?? [];
    list.push(placed(child, MAPLAYER_DEPTH + 1, layout));
    fresh.set(child.name, list);
  }
  const kept: XmlNode[] = [];
  let insertAt = -1;
  for (const node of mapLayer.children) {
    const category = node.kind === 'element' ? owned.get(node.name) : undefined;
    if (node.kind !== 'element' || category === undefined || !covers(document, category)) {
      kept.push(node);
      continue;
    }
    const replacement = fresh.get(node.name)?.shift();
    if (replacement) {
      kept.push(replacement);
      insertAt = kept.length;
    } else {
      if (isBlank(kept[kept.length - 1])) kept.pop();
      if (insertAt < 0) insertAt = kept.length;
    }
  }
  if (insertAt < 0) insertAt = isBlank(kept[kept.length - 1]) ? kept.length - 1 : kept.length;
  const added = elements.flatMap((child) => {
    const next = fresh.get(child.name)?.shift();
    return next ? [text(lineBreak(layout, MAPLAYER_DEPTH + 1)), next] : [];
  });
  kept.splice(insertAt, 0, ...added);
  mapLayer.children = kept;
}

function styleChildren(root: XmlElement, names: ReadonlyMap<string, string>): XmlElement[] {
  return childElements(root).filter((child) => names.has(child.name));
}

/** The layer's current style as the `<qgis>` document QGIS keeps for a style that is not current. */
function currentStyleDocument(mapLayer: XmlElement, version: string): XmlElement {
  const attributes: Record<string, string> = { version, styleCategories: KEPT_CATEGORIES };
  const own = [...(STYLE_ATTRIBUTES[mapLayer.attributes.get('type') ?? '']?.keys() ?? [])];
  for (const name of [...RENDERING_ATTRIBUTES, ...own]) {
    const value = mapLayer.attributes.get(name);
    if (value !== undefined) attributes[name] = value;
  }
  const kept = KEPT_CATEGORIES.split('|');
  const owned = styleElementsOf(mapLayer);
  const children = styleChildren(mapLayer, owned).filter((child) => kept.includes(owned.get(child.name) ?? ''));
  const geometry = geometryClass('layer', mapLayer.attributes.get('geometry'))?.code;
  if (geometry !== undefined) children.push(element('layerGeometryType', {}, [text(geometry)]));
  return element('qgis', attributes, children);
}

function setEntryDocument(mapLayer: XmlElement, target: XmlElement, document: XmlElement | undefined): void {
  const depth = MAPLAYER_DEPTH + 2;
  const layout = layoutOfLayer(mapLayer);
  target.children = document
    ? [text(lineBreak(layout, depth + 1)), placed(document, depth + 1, layout), text(lineBreak(layout, depth))]
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
    if (value === undefined) attributes.delete(name);
    else attributes.set(name, value);
  }
  return { ...qml, attributes };
}

/**
 * Makes an existing style the current one: its elements move into the `<maplayer>`. `name` is
 * as the layer's style manager writes it (see resolveLayerStyle).
 */
export function setCurrentLayerStyle(mapLayer: XmlElement, name: string): void {
  const target = entry(mapLayer, name);
  if (!target) throw new NotFound(`the layer has no style "${shownStyleName(name)}"`, { code: 'style_not_found' });
  const previousName = currentLayerStyleName(mapLayer);
  if (previousName === name) return;
  const document = firstChild(target, 'qgis');
  if (!document) throw new Unprocessable(`the layer's style "${shownStyleName(name)}" holds no style document`);
  const previous = entry(mapLayer, previousName);
  const kept = previous && currentStyleDocument(mapLayer, document.attributes.get('version') ?? '');
  replaceStyleElements(mapLayer, document, styleChildren(document, styleElementsOf(mapLayer)));
  takeStyleAttributes(mapLayer, document);
  takeRendering(mapLayer, document);
  if (previous) setEntryDocument(mapLayer, previous, kept);
  setEntryDocument(mapLayer, target, undefined);
  manager(mapLayer).attributes.set('current', name);
}

/** How a style is applied to a layer. */
export interface ApplyOptions {
  /**
   * Keep the layer's Rendering attributes (scale-based visibility, reference scale...) rather than
   * take the style's: for Steward's own styles, whose QML holds QGIS's defaults there, not the
   * designer's choice. A QML from QGIS brings its own, as Desktop's "Load Style" does.
   */
  keepLayerRendering?: boolean;
}

/**
 * Adds the style `name` to the layer from its QML, or replaces the style of that name; with
 * `current` it becomes the style QGIS Server draws when STYLE is empty. What the QML holds of its
 * categories (Symbology, Labeling, Diagrams, Rendering, the Fields' expression fields) is applied
 * as QGIS's "Load Style" applies it. Throws Unprocessable when the style cannot draw this layer.
 */
export function putLayerStyle(
  mapLayer: XmlElement,
  name: string,
  qml: string,
  current: boolean,
  options: ApplyOptions = {},
): void {
  const document = parseQml(qml, name);
  checkFits(mapLayer, document, name);
  const existing = entry(mapLayer, name);
  if (existing && currentLayerStyleName(mapLayer) === name) {
    replaceStyleElements(mapLayer, document, styleChildren(document, styleElementsOf(mapLayer)));
    takeStyleAttributes(mapLayer, document);
    if (!options.keepLayerRendering) takeRendering(mapLayer, document);
    return;
  }
  const target = existing ?? element('map-layer-style', { name });
  setEntryDocument(mapLayer, target, options.keepLayerRendering ? withLayerRendering(document, mapLayer) : document);
  if (!existing) {
    const layout = layoutOfLayer(mapLayer);
    appendChild(manager(mapLayer), target, MAPLAYER_DEPTH + 1, layout);
  }
  if (current) setCurrentLayerStyle(mapLayer, name);
}

/** Removes a style that is not the current one; Conflict for the current style, NotFound if absent. */
export function removeLayerStyle(mapLayer: XmlElement, name: string): void {
  const target = entry(mapLayer, name);
  if (!target) throw new NotFound(`the layer has no style "${shownStyleName(name)}"`, { code: 'style_not_found' });
  if (currentLayerStyleName(mapLayer) === name) {
    throw new Conflict(
      `the style "${shownStyleName(name)}" is the layer's current style; make another style current first`,
      { code: 'style_in_use' },
    );
  }
  removeChild(manager(mapLayer), target);
}
