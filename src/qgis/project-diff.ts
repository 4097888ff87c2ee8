import { type ProjectDocument } from './project.js';
import { styleElementNames } from './style/layer-styles.js';
import { childElements, type XmlElement } from './xml/node.js';
import { serializeElement } from './xml/serialize.js';

/** A layer in both projects that differs: the properties (its elements and attributes) and the styles that changed. */
export interface LayerChange {
  name: string;
  /** Renamed layers keep their id: the name they had in the older project. */
  previousName?: string;
  properties: string[];
  styles: string[];
}

/** How one project differs from another, as an operator reads it. */
export interface ProjectDiff {
  layers: { added: string[]; removed: string[]; changed: LayerChange[] };
  /** Whether the layer tree (order, groups, visibility) changed. */
  tree: boolean;
  /** The project settings (top-level elements other than layers and tree) that changed, by element name. */
  settings: string[];
}

/** Elements that hold layers or their order: compared by layer, or as the tree. */
const LAYER_ELEMENTS = new Set(['projectlayers', 'layer-tree-group', 'layerorder', 'snapping-settings']);

function markupByName(elements: readonly XmlElement[]): Map<string, string> {
  const byName = new Map<string, string>();
  for (const element of elements)
    byName.set(element.name, (byName.get(element.name) ?? '') + serializeElement(element));
  return byName;
}

/** The names whose markup differs between the two maps, present in either. */
function differing(from: ReadonlyMap<string, string>, to: ReadonlyMap<string, string>): string[] {
  const names = new Set([...from.keys(), ...to.keys()]);
  return [...names].filter((name) => from.get(name) !== to.get(name)).sort();
}

function attributes(element: XmlElement): Map<string, string> {
  return new Map([...element.attributes].map(([name, value]) => [`@${name}`, value]));
}

/** The layer's styles by name: its style manager's entries, and its current style's elements. */
function styles(element: XmlElement): Map<string, string> {
  const byName = new Map<string, string>();
  const manager = childElements(element, 'map-layer-style-manager')[0];
  for (const entry of manager ? childElements(manager, 'map-layer-style') : [])
    byName.set(entry.attributes.get('name') ?? '', serializeElement(entry));
  const own = new Set(styleElementNames(element));
  const current = manager?.attributes.get('current') ?? '';
  const drawn = childElements(element).filter((child) => own.has(child.name));
  byName.set(current, (byName.get(current) ?? '') + drawn.map(serializeElement).join(''));
  return byName;
}

function layerChange(name: string, previousName: string, from: XmlElement, to: XmlElement): LayerChange | undefined {
  if (serializeElement(from) === serializeElement(to)) return undefined;
  const styled = new Set([...styleElementNames(from), ...styleElementNames(to), 'map-layer-style-manager']);
  const properties = (element: XmlElement) =>
    new Map([
      ...attributes(element),
      ...markupByName(childElements(element).filter((child) => !styled.has(child.name))),
    ]);
  return {
    name,
    ...(previousName !== name && { previousName }),
    properties: differing(properties(from), properties(to)),
    styles: differing(styles(from), styles(to)),
  };
}

/** How `to` differs from `from`: layers by id, the tree, and the other settings. Both documents may be expanded. */
export function diffProjects(from: ProjectDocument, to: ProjectDocument): ProjectDiff {
  const before = new Map(from.layers().map((layer) => [layer.id, layer.name]));
  const after = new Map(to.layers().map((layer) => [layer.id, layer.name]));
  const changed: LayerChange[] = [];
  for (const [id, name] of after) {
    const previousName = before.get(id);
    if (previousName === undefined) continue;
    const oldElement = from.mapLayerElement(previousName);
    const newElement = to.mapLayerElement(name);
    const change = oldElement && newElement && layerChange(name, previousName, oldElement, newElement);
    if (change) changed.push(change);
  }
  const topLevel = (document: ProjectDocument) =>
    markupByName(childElements(document.root).filter((child) => !LAYER_ELEMENTS.has(child.name)));
  const tree = (document: ProjectDocument) =>
    childElements(document.root)
      .filter((child) => child.name === 'layer-tree-group' || child.name === 'layerorder')
      .map(serializeElement)
      .join('');
  return {
    layers: {
      added: [...after].filter(([id]) => !before.has(id)).map(([, name]) => name),
      removed: [...before].filter(([id]) => !after.has(id)).map(([, name]) => name),
      changed,
    },
    tree: tree(from) !== tree(to),
    settings: differing(
      new Map([...attributes(from.root), ...topLevel(from)]),
      new Map([...attributes(to.root), ...topLevel(to)]),
    ),
  };
}
