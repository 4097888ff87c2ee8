/**
 * A project's layer tree (`<layer-tree-group>`) as JSON, and its replacement: groups and layers
 * nested as QGIS nests them, the drawing order (`<custom-order>`, `<layerorder>`) with them.
 */
import { Conflict, Unprocessable } from '../errors.js';
import { layerTreeElement } from './layer.js';
import { optionMap } from './style/xml.js';
import {
  childElements,
  element,
  firstChild,
  indent,
  text,
  type XmlElement,
  type XmlNode,
  type XmlText,
} from './xml/node.js';

export interface TreeLayer {
  type: 'layer';
  name: string;
  visible: boolean;
}

export interface TreeGroup {
  type: 'group';
  name: string;
  visible: boolean;
  expanded: boolean;
  mutually_exclusive: boolean;
  /** What QGIS Server gives the group in WMS: its title, and the name it is requested by. */
  title?: string;
  short_name?: string;
  abstract?: string;
  /** A group embedded from another project: its content is that project's. */
  embedded?: boolean;
  children: TreeNode[];
}

export type TreeNode = TreeLayer | TreeGroup;

export interface LayerTree {
  children: TreeNode[];
  /** The drawing order, top first, when the project sets one; else layers are drawn as the tree orders them. */
  order?: string[];
}

/** A tree as a request gives it: group flags may be left out. */
export type TreeRequestNode =
  | { type: 'layer'; name: string; visible?: boolean }
  | (Partial<Omit<TreeGroup, 'type' | 'name' | 'children'>> & {
      type: 'group';
      name: string;
      children?: TreeRequestNode[];
    });

export interface LayerTreeRequest {
  children: TreeRequestNode[];
  order?: string[] | null;
}

/** A layer of the project the tree has no node for, with what its new node needs. */
export type UntreedLayer = Parameters<typeof layerTreeElement>[0];

const GROUP = 'layer-tree-group';
const LAYER = 'layer-tree-layer';
const CHECKED = 'Qt::Checked';
const UNCHECKED = 'Qt::Unchecked';
/** The custom properties QGIS Server reads a group's WMS name, title and abstract from. */
const SERVER_PROPERTIES = { short_name: 'wmsShortName', title: 'wmsTitle', abstract: 'wmsAbstract' } as const;

function isVisible(node: XmlElement): boolean {
  return node.attributes.get('checked') !== UNCHECKED;
}

/** A node's custom properties, in the `<Option type="Map">` form or the older `<property key value>` one. */
function customProperties(node: XmlElement): Map<string, string> {
  const found = new Map<string, string>();
  const container = firstChild(node, 'customproperties');
  if (!container) return found;
  for (const property of childElements(container, 'property'))
    found.set(property.attributes.get('key') ?? '', property.attributes.get('value') ?? '');
  const map = childElements(container, 'Option').find((option) => option.attributes.get('type') === 'Map');
  for (const option of map ? childElements(map, 'Option') : [])
    found.set(option.attributes.get('name') ?? '', option.attributes.get('value') ?? '');
  return found;
}

function isEmbedded(group: XmlElement): boolean {
  return group.attributes.get('embedded') === '1' || customProperties(group).get('embedded') === '1';
}

/** Resolves a tree layer node's layer name: the layer's own, else the name the node carries. */
export type NameOf = (id: string) => string | undefined;

function layerName(node: XmlElement, nameOf: NameOf): string {
  const id = node.attributes.get('id') ?? '';
  return nameOf(id) ?? node.attributes.get('name') ?? id;
}

function readNode(node: XmlElement, nameOf: NameOf): TreeNode | undefined {
  if (node.name === LAYER) return { type: 'layer', name: layerName(node, nameOf), visible: isVisible(node) };
  return node.name === GROUP ? readGroup(node, readChildren(node, nameOf)) : undefined;
}

/** The group of node `node`, its children those given. */
function readGroup(node: XmlElement, children: TreeNode[]): TreeGroup {
  const properties = customProperties(node);
  const group: TreeGroup = {
    type: 'group',
    name: node.attributes.get('name') ?? '',
    visible: isVisible(node),
    expanded: node.attributes.get('expanded') !== '0',
    mutually_exclusive: node.attributes.get('mutually-exclusive') === '1',
    children,
  };
  for (const [field, key] of Object.entries(SERVER_PROPERTIES)) {
    const value = properties.get(key);
    if (value) group[field as keyof typeof SERVER_PROPERTIES] = value;
  }
  if (isEmbedded(node)) group.embedded = true;
  return group;
}

function readChildren(group: XmlElement, nameOf: NameOf): TreeNode[] {
  const children: TreeNode[] = [];
  for (const child of childElements(group)) {
    const node = readNode(child, nameOf);
    if (node) children.push(node);
  }
  return children;
}

/** The ids of a custom order's items, top first. */
function orderIds(customOrder: XmlElement | undefined): string[] {
  return customOrder ? childElements(customOrder, 'item').map((item) => textOf(item)) : [];
}

function textOf(node: XmlElement): string {
  const [only] = node.children;
  return only?.kind === 'text' ? only.value : '';
}

export function readLayerTree(root: XmlElement, nameOf: NameOf): LayerTree {
  const tree: LayerTree = { children: readChildren(root, nameOf) };
  const customOrder = firstChild(root, 'custom-order');
  if (customOrder?.attributes.get('enabled') === '1') {
    const names = new Map<string, string>();
    collectLayers(root, (node) => names.set(node.attributes.get('id') ?? '', layerName(node, nameOf)));
    tree.order = orderIds(customOrder).map((id) => names.get(id) ?? nameOf(id) ?? id);
  }
  return tree;
}

/** Calls `visit` with every layer node under `group`, embedded groups included, top first. */
function collectLayers(group: XmlElement, visit: (node: XmlElement, depth: number) => void, depth = 1): void {
  for (const child of childElements(group)) {
    if (child.name === LAYER) visit(child, depth + 1);
    else if (child.name === GROUP) collectLayers(child, visit, depth + 1);
  }
}

/** A node of the current tree and how deep it sits (the root group is at depth 1). */
interface Placed {
  node: XmlElement;
  depth: number;
  /** The replacement that last took it (`replacements`): a layer taken twice is named twice. */
  taken?: number;
}

/**
 * A layer's node placed, with the attributes a replacement reads of each layer: a tree of a
 * thousand layers is replaced without looking into the thousand nodes (never changed in place).
 */
interface PlacedLayer extends Placed {
  id: string;
  checked: string | undefined;
}

function placedLayer(node: XmlElement, depth: number): PlacedLayer {
  return { node, depth, taken: 0, id: node.attributes.get('id') ?? '', checked: node.attributes.get('checked') };
}

/** Replacements made, each taking the current nodes it keeps once. */
let replacements = 0;

/**
 * The current tree's nodes by name: layers and groups outside embedded groups, and embedded groups;
 * and the custom order's ids. Kept from one replacement to the next (which brings it up to date),
 * so that a replacement costs the nodes the request changes rather than a read of the whole tree.
 */
export interface CurrentTree {
  layers: Map<string, PlacedLayer[]>;
  groups: Map<string, Placed[]>;
  embedded: Map<string, Placed[]>;
  /** Layer names of each embedded group, for the drawing order. */
  embeddedLayers: Map<string, Array<{ id: string; name: string }>>;
  /** Names of several layers of the tree. */
  ambiguous: string[];
  /** The ids the custom order lists, top first, and as a set. */
  listed: string[];
  known: Set<string>;
  /** Whether the custom order lists every layer of the tree: so it does after a replacement, until layers are added. */
  listsEvery: boolean;
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The current tree under `root`, read from its nodes. */
export function readCurrentTree(root: XmlElement, nameOf: NameOf): CurrentTree {
  const listed = orderIds(firstChild(root, 'custom-order'));
  const current: CurrentTree = {
    layers: new Map(),
    groups: new Map(),
    embedded: new Map(),
    embeddedLayers: new Map(),
    ambiguous: [],
    listed,
    known: new Set(listed),
    listsEvery: false,
  };
  const visit = (group: XmlElement, depth: number): void => {
    for (const node of childElements(group)) {
      if (node.name === LAYER) push(current.layers, layerName(node, nameOf), placedLayer(node, depth + 1));
      else if (node.name === GROUP && isEmbedded(node)) {
        const name = node.attributes.get('name') ?? '';
        push(current.embedded, name, { node, depth: depth + 1 });
        const layers: Array<{ id: string; name: string }> = [];
        collectLayers(node, (layer) =>
          layers.push({ id: layer.attributes.get('id') ?? '', name: layerName(layer, nameOf) }),
        );
        current.embeddedLayers.set(name, layers);
      } else if (node.name === GROUP) {
        push(current.groups, node.attributes.get('name') ?? '', { node, depth: depth + 1 });
        visit(node, depth + 1);
      }
    }
  };
  visit(root, 1);
  for (const [name, places] of current.layers) if (places.length > 1) current.ambiguous.push(name);
  return current;
}

/** What a request names, each name with how often. */
interface Named {
  layers: Map<string, number>;
  embedded: Map<string, number>;
}

function countNames(nodes: readonly TreeRequestNode[], named: Named): void {
  for (const node of nodes) {
    if (node.type === 'layer') named.layers.set(node.name, (named.layers.get(node.name) ?? 0) + 1);
    else if (node.embedded) named.embedded.set(node.name, (named.embedded.get(node.name) ?? 0) + 1);
    else countNames(node.children ?? [], named);
  }
}

function quoted(names: Iterable<string>): string {
  return [...names].map((name) => `"${name}"`).join(', ');
}

/** Names as a set or a map's keys hold them. */
type Names = Pick<ReadonlySet<string>, 'has' | 'keys'>;

/** Refuses a tree that does not hold every layer (and embedded group) of the project exactly once. */
function checkComplete(named: Named, current: CurrentTree, untreed: ReadonlyMap<string, UntreedLayer>): void {
  const problems: string[] = [];
  // Loops rather than spread copies: a large project's tree is checked at every replacement.
  const check = (kind: string, wanted: Map<string, number>, known: Names): void => {
    const unknown: string[] = [];
    const repeated: string[] = [];
    const missing: string[] = [];
    for (const [name, count] of wanted) {
      if (!known.has(name)) unknown.push(name);
      else if (count > 1) repeated.push(name);
    }
    for (const name of known.keys()) if (!wanted.has(name)) missing.push(name);
    if (unknown.length) problems.push(`the project has no ${kind} ${quoted(unknown)}`);
    if (repeated.length) problems.push(`${quoted(repeated)} appear more than once`);
    if (missing.length) problems.push(`${kind}s ${quoted(missing)} are missing`);
  };
  check('layer', named.layers, untreed.size ? new Set([...current.layers.keys(), ...untreed.keys()]) : current.layers);
  check('embedded group', named.embedded, current.embedded);
  if (problems.length) throw new Unprocessable(`the tree must hold every layer exactly once: ${problems.join('; ')}`);
  if (current.ambiguous.length)
    throw new Conflict(`the layer tree holds several layers named ${quoted(current.ambiguous)}: rename them first`);
}

/** Refuses a request that does not name every layer and embedded group of the current tree once. */
function checkRequest(
  request: LayerTreeRequest,
  current: CurrentTree,
  untreed: ReadonlyMap<string, UntreedLayer>,
): void {
  const named: Named = { layers: new Map(), embedded: new Map() };
  countNames(request.children, named);
  checkComplete(named, current, untreed);
}

/** The line break and indentation before a node at `depth`, one node for each depth: text nodes are never changed in place. */
const indentations: XmlText[] = [];

function indentation(depth: number): XmlText {
  return (indentations[depth] ??= text('\n' + '  '.repeat(depth)));
}

/** Whitespace-only text, which QGIS writes as indentation between elements. */
function isIndent(node: XmlNode): boolean {
  return node.kind === 'text' && node.value.trim() === '';
}

/** A copy of `node` indented for `depth`, as QGIS indents it (two spaces a level); the original is left as it was. */
function reindented(node: XmlElement, depth: number): XmlElement {
  const children = node.children.filter((child) => !isIndent(child));
  const onlyElements = children.length > 0 && children.every((child) => child.kind === 'element');
  if (!onlyElements) return { ...node, attributes: new Map(node.attributes) };
  const inner = '\n' + '  '.repeat(depth + 1);
  return {
    ...node,
    attributes: new Map(node.attributes),
    children: [
      ...children.flatMap((child) => [text(inner), reindented(child, depth + 1)]),
      text('\n' + '  '.repeat(depth)),
    ],
  };
}

/**
 * A layer's node and its copies indented for other depths, placed, by depth, shared by each of
 * them: a layer moved into a group and back out is its own node again, whose written markup stays
 * good, and moved in again is the copy made the first time. Nodes are never changed in place, so
 * neither are copies, nor what their places say of them.
 */
const indentedCopies = new WeakMap<XmlElement, Map<number, PlacedLayer>>();

/** The placed layer's node indented for `depth`, placed: itself at its own depth, else its copy for that depth (added to `made` when new). */
function indentedFor(place: PlacedLayer, depth: number, made: XmlElement[]): PlacedLayer {
  if (place.depth === depth) return place;
  let copies = indentedCopies.get(place.node);
  if (copies === undefined) {
    copies = new Map([[place.depth, place]]);
    indentedCopies.set(place.node, copies);
  }
  let copy = copies.get(depth);
  if (copy === undefined) {
    copy = placedLayer(reindented(place.node, depth), depth);
    copies.set(depth, copy);
    indentedCopies.set(copy.node, copies);
    made.push(copy.node);
  }
  return copy;
}

/** `node` with `attributes` changed: itself when nothing changes (its written markup stays good), else a copy, added to `made`. */
function withAttributes(
  node: XmlElement,
  attributes: Record<string, string | undefined>,
  made?: XmlElement[],
): XmlElement {
  const changes: Array<[string, string | undefined]> = [];
  for (const name in attributes)
    if (node.attributes.get(name) !== attributes[name]) changes.push([name, attributes[name]]);
  if (changes.length === 0) return node;
  const copy = { ...node, attributes: new Map(node.attributes) };
  for (const [name, value] of changes) {
    if (value === undefined) copy.attributes.delete(name);
    else copy.attributes.set(name, value);
  }
  made?.push(copy);
  return copy;
}

function checkState(visible: boolean): string {
  return visible ? CHECKED : UNCHECKED;
}

/** The group's custom properties with its WMS fields set as asked (an empty one removed). */
function withServerProperties(
  properties: XmlElement | undefined,
  group: TreeRequestNode & { type: 'group' },
): XmlElement {
  const values: Record<string, string> = {};
  let changed = false;
  if (properties) {
    const map = childElements(properties, 'Option').find((option) => option.attributes.get('type') === 'Map');
    for (const option of map ? childElements(map, 'Option') : [])
      values[option.attributes.get('name') ?? ''] = option.attributes.get('value') ?? '';
  }
  for (const [field, key] of Object.entries(SERVER_PROPERTIES)) {
    const value = group[field as keyof typeof SERVER_PROPERTIES];
    if (value === undefined || (values[key] ?? '') === value) continue;
    changed = true;
    if (value === '') delete values[key];
    else values[key] = value;
  }
  if (properties && !changed) return properties;
  const legacy = properties ? childElements(properties, 'property') : [];
  const entries = Object.keys(values).length > 0 ? optionMap(values) : element('Option');
  return element('customproperties', {}, [...legacy, entries]);
}

/** The build of a new tree: the current nodes, taken as the request places them. */
class TreeBuilder {
  /** Ids of the new tree's layers, top first, embedded groups' included, and their names, when listed. */
  readonly layerIds: string[] = [];
  readonly layerNames: string[] = [];
  /** The nodes made for the new tree, where the current ones could not stand as they are. */
  readonly made: XmlElement[] = [];
  /** Whether the request named a node the tree lacks, or one twice: it is then checked whole. */
  private wrong = false;
  private readonly replacement = ++replacements;
  /** The current layers and embedded groups taken, each once. */
  private layersTaken = 0;
  private embeddedTaken = 0;
  /** How many current groups of each name were taken, in document order. */
  private readonly groupsTaken = new Map<string, number>();
  /** Where the new tree places what moved or is new, to bring the current tree up to date. */
  private readonly movedLayers: Array<[string, PlacedLayer]> = [];
  private readonly newGroups = new Map<string, Placed[]>();
  private readonly movedEmbedded: Array<[string, Placed]> = [];

  constructor(
    private readonly current: CurrentTree,
    private readonly untreed: ReadonlyMap<string, UntreedLayer>,
    private readonly nameOf: NameOf,
    /** Whether to list the layers' ids and names: the drawing order needs them. */
    private readonly listing: boolean,
  ) {}

  /** Whether the request took every layer and embedded group of the current tree, and the untreed layers, once each. */
  get complete(): boolean {
    return (
      !this.wrong &&
      this.layersTaken === this.current.layers.size + this.untreed.size &&
      this.embeddedTaken === this.current.embedded.size
    );
  }

  /** Brings `current` up to date with the new tree, once written. */
  update(current: CurrentTree): void {
    for (const [name, place] of this.movedLayers) current.layers.set(name, [place]);
    for (const [name, place] of this.movedEmbedded) current.embedded.set(name, [place]);
    current.groups = this.newGroups;
  }

  /** The nodes of a container at `depth`, each indented; `written` receives each as the tree answers it. */
  children(nodes: readonly TreeRequestNode[], depth: number, exclusive: boolean, written: TreeNode[]): XmlNode[] {
    const inner = indentation(depth + 1);
    const shown = exclusive ? nodes.findIndex((node) => node.visible !== false) : -1;
    const children: XmlNode[] = [];
    nodes.forEach((node, index) => {
      const visible = exclusive ? index === shown : node.visible !== false;
      if (node.type === 'layer') {
        children.push(inner, this.layer(node.name, visible, depth + 1));
        written.push({ type: 'layer', name: node.name, visible });
      } else children.push(inner, this.group(node, visible, depth + 1, written));
    });
    return children;
  }

  /** Takes `place` for this replacement: false when it was taken already. */
  private take(place: Placed): boolean {
    if (place.taken === this.replacement) return false;
    place.taken = this.replacement;
    return true;
  }

  private layer(name: string, visible: boolean, depth: number): XmlElement {
    const place = this.current.layers.get(name)?.[0];
    const checked = checkState(visible);
    let placed: PlacedLayer;
    if (place) {
      if (!this.take(place)) this.wrong = true;
      // Most layers stay where and as they were, or go back to where they were: kept without building a change.
      placed = indentedFor(place, depth, this.made);
      if (placed.checked !== checked) placed = placedLayer(withAttributes(placed.node, { checked }, this.made), depth);
    } else {
      const untreed = this.untreed.get(name);
      if (!untreed) this.wrong = true;
      placed = placedLayer(untreed ? indent(layerTreeElement(untreed, visible), depth) : element(LAYER), depth);
      this.made.push(placed.node);
    }
    this.layersTaken++;
    if (placed !== place) this.movedLayers.push([name, placed]);
    if (this.listing) {
      this.layerIds.push(placed.id);
      this.layerNames.push(name);
    }
    return placed.node;
  }

  private group(
    request: TreeRequestNode & { type: 'group' },
    visible: boolean,
    depth: number,
    written: TreeNode[],
  ): XmlElement {
    if (request.embedded) {
      const node = this.embedded(request, visible, depth);
      written.push(readNode(node, this.nameOf) as TreeNode);
      return node;
    }
    const taken = this.groupsTaken.get(request.name) ?? 0;
    const place = this.current.groups.get(request.name)?.[taken];
    this.groupsTaken.set(request.name, taken + 1);
    const exclusive = request.mutually_exclusive ?? place?.node.attributes.get('mutually-exclusive') === '1';
    const nodes = request.children ?? [];
    const attributes = new Map(
      place?.node.attributes ?? [
        ['checked', ''],
        ['expanded', ''],
        ['name', ''],
      ],
    );
    attributes.set('checked', checkState(visible));
    const expanded = request.expanded ?? place?.node.attributes.get('expanded') !== '0';
    attributes.set('expanded', expanded ? '1' : '0');
    attributes.set('name', request.name);
    if (exclusive) {
      attributes.set('mutually-exclusive', '1');
      attributes.set('mutually-exclusive-child', String(nodes.findIndex((node) => node.visible !== false)));
    } else {
      attributes.delete('mutually-exclusive');
      attributes.delete('mutually-exclusive-child');
    }
    const kept = place ? childElements(place.node).filter((child) => child.name !== LAYER && child.name !== GROUP) : [];
    const properties = kept.find((child) => child.name === 'customproperties');
    const others = [withServerProperties(properties, request), ...kept.filter((child) => child !== properties)];
    const inner = '\n' + '  '.repeat(depth + 1);
    const members: TreeNode[] = [];
    const children = [
      ...others.flatMap((child) => [
        text(inner),
        child === properties && place?.depth === depth ? child : reindented(child, depth + 1),
      ]),
      ...this.children(nodes, depth, exclusive, members),
      text('\n' + '  '.repeat(depth)),
    ];
    const group: XmlElement = { kind: 'element', name: GROUP, attributes, children };
    push(this.newGroups, request.name, { node: group, depth });
    written.push(readGroup(group, members));
    return group;
  }

  private embedded(request: TreeRequestNode & { type: 'group' }, visible: boolean, depth: number): XmlElement {
    const place = this.current.embedded.get(request.name)?.[0];
    if (!place || !this.take(place)) {
      this.wrong = true;
      return element(GROUP);
    }
    this.embeddedTaken++;
    if (this.listing)
      for (const { id, name } of this.current.embeddedLayers.get(request.name) ?? []) {
        this.layerIds.push(id);
        this.layerNames.push(name);
      }
    const attributes: Record<string, string> = { checked: checkState(visible) };
    if (request.expanded !== undefined) attributes['expanded'] = request.expanded ? '1' : '0';
    // Not a record: its layers' nodes may be replaced in it (a layer renamed), so it is neither
    // remembered as written nor kept among the indented copies.
    const node = withAttributes(place.depth === depth ? place.node : reindented(place.node, depth), attributes);
    if (node !== place.node) this.movedEmbedded.push([request.name, { node, depth }]);
    return node;
  }
}

/** The ids of the explicit drawing order, checked to hold every layer of the new tree once. */
function explicitOrder(order: readonly string[], builder: TreeBuilder): string[] {
  const ids = new Map<string, string>();
  builder.layerNames.forEach((name, index) => ids.set(name, builder.layerIds[index] as string));
  const unknown = order.filter((name) => !ids.has(name));
  const given = new Set<string>();
  const repeated = new Set<string>();
  for (const name of order) (given.has(name) ? repeated : given).add(name);
  const missing = [...ids.keys()].filter((name) => !given.has(name));
  const problems = [
    unknown.length ? `the tree has no layer ${quoted(unknown)}` : '',
    repeated.size ? `${quoted(repeated)} appear more than once` : '',
    missing.length ? `${quoted(missing)} are missing` : '',
  ].filter(Boolean);
  if (problems.length) throw new Unprocessable(`order must name every layer of the tree once: ${problems.join('; ')}`);
  return order.map((name) => ids.get(name) as string);
}

/** The items of `container` for `ids`, in that order: the existing ones for ids they had (their written markup kept), else new ones added to `made`. */
function orderedRecords(
  container: XmlElement,
  name: string,
  idOf: (node: XmlElement) => string,
  make: (id: string) => XmlElement,
  ids: readonly string[],
  depth: number,
  made: XmlElement[],
): void {
  const existing = new Map<string, XmlElement>();
  for (const node of childElements(container, name)) if (!existing.has(idOf(node))) existing.set(idOf(node), node);
  const inner = indentation(depth + 1);
  const children: XmlNode[] = [];
  for (const id of ids) {
    let record = existing.get(id);
    if (record === undefined) made.push((record = make(id)));
    children.push(inner, record);
  }
  if (children.length > 0) children.push(indentation(depth));
  container.children = children;
}

/**
 * Replaces the layer tree under `root` (the project's `<layer-tree-group>`) by `request`, and the
 * drawing orders with it: `<custom-order>` and `<layerorder>` (QGIS writes its custom order
 * list in both) hold the request's `order`, enabled; without one the custom order is turned off
 * and the layers are drawn as the tree orders them. Nodes of layers and groups are kept as they were where
 * nothing of them changes. Throws Unprocessable for a tree that misses a layer or names one twice
 * or one the project lacks, Conflict when two layers of the tree share a name. `current` is the
 * tree as it stands (read when not given), brought up to date when the tree is replaced. Answers the tree
 * as written (as `readLayerTree` reads it back), and the nodes made anew (layer nodes moved or
 * changed, drawing order items), none of them to be changed in place.
 */
export function replaceLayerTree(
  root: XmlElement,
  layerOrder: XmlElement,
  request: LayerTreeRequest,
  nameOf: NameOf,
  untreed: ReadonlyMap<string, UntreedLayer>,
  current: CurrentTree = readCurrentTree(root, nameOf),
): { tree: LayerTree; made: XmlElement[] } {
  // A tree of layers named once each, all in it, is checked as it is built: nodes named twice or
  // unknown are found then, missing ones by their count.
  const checkedAsBuilt = untreed.size === 0 && current.ambiguous.length === 0;
  if (!checkedAsBuilt) checkRequest(request, current, untreed);
  // A tree of the same layers as the last one, which the custom order listed, adds none to it.
  const listed = current.listsEvery && untreed.size === 0;
  const builder = new TreeBuilder(current, untreed, nameOf, Boolean(request.order) || !listed);
  const tree: LayerTree = { children: [] };
  const nodes = builder.children(request.children, 1, false, tree.children);
  if (!builder.complete) {
    checkRequest(request, current, untreed);
    throw new Unprocessable('the tree must hold every layer exactly once');
  }
  const customOrder = firstChild(root, 'custom-order') ?? element('custom-order');
  // Without an order of its own the project keeps its custom order list, as QGIS does when layers
  // move in the tree, only adding the layers it lacks at its end.
  const ids = request.order
    ? explicitOrder(request.order, builder)
    : listed
      ? current.listed
      : [...current.listed, ...builder.layerIds.filter((id) => !current.known.has(id))];
  customOrder.attributes.set('enabled', request.order ? '1' : '0');
  if (request.order || ids.length > current.listed.length) {
    orderedRecords(customOrder, 'item', textOf, (id) => element('item', {}, [text(id)]), ids, 2, builder.made);
    orderedRecords(
      layerOrder,
      'layer',
      (node) => node.attributes.get('id') ?? '',
      (id) => element('layer', { id }),
      ids,
      1,
      builder.made,
    );
    current.listed = ids;
    current.known = new Set(ids);
  }
  const kept = childElements(root).filter(
    (child) => child.name !== LAYER && child.name !== GROUP && child !== customOrder,
  );
  root.children = [
    ...kept.flatMap((child) => [indentation(2), child]),
    ...nodes,
    indentation(2),
    customOrder,
    indentation(1),
  ];
  builder.update(current);
  current.listsEvery = true;
  if (request.order) tree.order = [...request.order];
  return { tree, made: builder.made };
}

/** Names the layer `id`'s nodes under `group` `name`, as copies (a node's written markup must stay its own), added to `made`. */
export function renameLayerNodes(group: XmlElement, id: string, name: string, made: XmlElement[] = []): XmlElement[] {
  group.children.forEach((child, index) => {
    if (child.kind !== 'element') return;
    if (child.name === GROUP) renameLayerNodes(child, id, name, made);
    else if (child.name === LAYER && child.attributes.get('id') === id) {
      const renamed = { ...child, attributes: new Map(child.attributes) };
      renamed.attributes.set('name', name);
      group.children[index] = renamed;
      made.push(renamed);
    }
  });
  return made;
}
