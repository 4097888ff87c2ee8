import { DocumentFormatError } from '../errors.js';
import { authidOf } from './crs.js';
import { type Extent, layerTreeElement, type LayerType, type MapLayerDefinition, mapLayerElement } from './layer.js';
import { fieldsUsed, type NewDatasource, writeLayerDatasource } from './layer-datasource.js';
import {
  type LayerProperties,
  type LayerPropertiesChange,
  readLayerProperties,
  writeLayerProperties,
} from './layer-properties.js';
import { LayerRecords } from './layer-records.js';
import {
  addSnapping,
  fieldsOf,
  namesOtherLayers,
  removeLayerReferences,
  removeProjectReferences,
  snappingSettings,
} from './layer-references.js';
import {
  type CurrentTree,
  type LayerTree,
  type LayerTreeRequest,
  readCurrentTree,
  readLayerTree,
  renameLayerNodes,
  replaceLayerTree,
  type UntreedLayer,
} from './layer-tree.js';
import { type MetadataChange, type ProjectMetadata, readMetadata, writeMetadata } from './project-metadata.js';
import {
  type LayerNames,
  readServices,
  type ServicesChange,
  type ServiceSettings,
  writeServices,
} from './project-services.js';
import { emptyProject, type NewProject } from './project-template.js';
import { readTimeDimension, type TimeDimension } from './temporal.js';
import { elementBytes } from './xml/element-bytes.js';
import { type Layout, layoutOf, lineBreak } from './xml/layout.js';
import { MarkupMemo } from './xml/markup-memo.js';
import {
  appendChild,
  childElements,
  childText,
  deferredMarkup,
  element,
  ensureChild,
  firstChild,
  indent,
  path,
  removeChild,
  type XmlDeferred,
  type XmlDocument,
  type XmlElement,
  type XmlNode,
} from './xml/node.js';
import { parseXml } from './xml/parse.js';
import { serializeElement, serializeXml, serializeXmlUtf8 } from './xml/serialize.js';
import { WrittenMarkup } from './xml/written-markup.js';

/** Layers stay text until a change needs their elements, which keeps big projects small in memory. */
const DEFERRED_ELEMENTS: ReadonlySet<string> = new Set(['maplayer']);

type MapLayerNode = XmlElement | XmlDeferred;

/**
 * The per-layer records outside `<projectlayers>`, by their container's path: Steward adds and
 * removes them but never changes one in place, so each is written once and its text reused.
 */
const RECORDS: ReadonlyArray<{ path: string[]; record: string }> = [
  { path: ['layerorder'], record: 'layer' },
  { path: ['snapping-settings', 'individual-layer-settings'], record: 'layer-setting' },
  { path: ['layer-tree-group', 'custom-order'], record: 'item' },
];

/** What Steward reads of a layer from the project itself. */
export interface LayerEntry {
  id: string;
  name: string;
  /** The name QGIS Desktop's "Short name" gives the layer in QGIS Server, when it has one. */
  shortName?: string;
  type: LayerType;
  provider: string;
  datasource: string;
  authid: string;
  extent: Extent;
  /** Vector only, as QGIS names them (`MultiLineString`, `Line`). */
  wkbType?: string;
  geometry?: string;
  /** Raster only: the time its temporal properties fix it at, as a WMS time dimension. */
  time?: TimeDimension;
  currentStyle: string;
  styles: string[];
  /** Whether its `<flags>` let QGIS identify it (GetFeatureInfo refuses a layer that is not). */
  identifiable: boolean;
}

/** A layer with the name QGIS Server publishes it under in WMS (`ProjectDocument.wmsName`). */
export interface PublishedLayer extends LayerEntry {
  wmsName: string;
}

export class ProjectFormatError extends DocumentFormatError {}

/**
 * A project property as QGIS reads a flag: Desktop writes `true` (a bool) but a script's
 * `writeEntry(..., True)` writes `1` (an int), and Qt takes any text but empty, `0` and `false` as true.
 */
function isTrue(text: string): boolean {
  return text !== '' && text !== '0' && text.toLowerCase() !== 'false';
}

function numberOf(container: XmlElement | undefined, name: string): number {
  return container ? Number(childText(container, name)) : Number.NaN;
}

function readExtent(layer: XmlElement): Extent {
  const box = firstChild(layer, 'extent');
  return [numberOf(box, 'xmin'), numberOf(box, 'ymin'), numberOf(box, 'xmax'), numberOf(box, 'ymax')];
}

function readStyles(layer: XmlElement): { currentStyle: string; styles: string[] } {
  const manager = firstChild(layer, 'map-layer-style-manager');
  const styles = manager ? childElements(manager, 'map-layer-style').map((s) => s.attributes.get('name') ?? '') : [];
  const currentStyle = manager?.attributes.get('current') ?? '';
  // QGIS names a layer's only, unnamed style "default" on the server.
  return {
    currentStyle: currentStyle || 'default',
    styles: styles.length > 0 ? styles.map((s) => s || 'default') : ['default'],
  };
}

function readLayer(layer: XmlElement): LayerEntry {
  const type = layer.attributes.get('type');
  if (type !== 'vector' && type !== 'raster') {
    throw new ProjectFormatError(`layer type "${type}" is not handled`);
  }
  const entry: LayerEntry = {
    id: childText(layer, 'id'),
    name: childText(layer, 'layername'),
    type,
    provider: childText(layer, 'provider'),
    datasource: childText(layer, 'datasource'),
    authid: authidOf(firstChild(layer, 'srs')),
    extent: readExtent(layer),
    ...readStyles(layer),
    identifiable: childText(layer, 'flags', 'Identifiable') !== '0',
  };
  const shortName = childText(layer, 'shortname');
  if (shortName) entry.shortName = shortName;
  if (type === 'vector') {
    entry.wkbType = layer.attributes.get('wkbType') ?? '';
    entry.geometry = layer.attributes.get('geometry') ?? '';
  } else {
    const time = readTimeDimension(layer);
    if (time) entry.time = time;
  }
  return entry;
}

/** Reads a layer, or undefined for kinds Steward does not manage (mesh, vector tiles...). */
function managedEntry(layer: XmlElement): LayerEntry | undefined {
  const type = layer.attributes.get('type');
  return type === 'vector' || type === 'raster' ? readLayer(layer) : undefined;
}

/** What a layer kept as text says of itself. */
interface DeferredLayerFacts {
  entry: LayerEntry | undefined;
  /** Whether it joins or relates to other layers, which their removal changes. */
  linked: boolean;
}

function layerFacts(layer: XmlElement): DeferredLayerFacts {
  return { entry: managedEntry(layer), linked: namesOtherLayers(layer) };
}

/**
 * What layers kept as text say of themselves, by their bytes, across documents: a version restored
 * or a project read again holds mostly the layers already read. Facts are never changed once read.
 */
const KNOWN_LAYERS = new MarkupMemo<DeferredLayerFacts>(20_000);

/** What the layer of markup `utf8` says of itself, read once for the same bytes. */
function knownLayerFacts(utf8: Buffer): DeferredLayerFacts {
  return KNOWN_LAYERS.get(utf8, () => layerFacts(parseXml(utf8.toString('utf8')).root));
}

/** Ids of the layers of the layer tree, top first, groups flattened in document order. */
function treeLayerIds(group: XmlElement): string[] {
  const ids: string[] = [];
  for (const child of childElements(group)) {
    if (child.name === 'layer-tree-layer') ids.push(child.attributes.get('id') ?? '');
    else if (child.name === 'layer-tree-group') for (const id of treeLayerIds(child)) ids.push(id);
  }
  return ids;
}

/** The layers Steward manages, by name, as `layers()` lists them. */
interface LayerIndex {
  byName: Map<string, LayerEntry>;
  /**
   * Every layer is in the layer tree, under a name no other layer has: a layer added at the bottom
   * of the tree then comes last, and a removed one uncovers no other of its name, so edits can keep
   * the index rather than read every layer again.
   */
  simple: boolean;
  /** Whether `byName` follows the layer tree as it is: a new tree leaves a simple index to be put in its order when listed. */
  ordered: boolean;
  /**
   * `everyLayer()`'s list, kept until an entry changes: the versions of writes that change no layer
   * (a tree, the service settings) then compare the same list with itself.
   */
  every?: LayerEntry[];
}

/**
 * A QGIS project (.qgs XML) edited as a document: Steward changes the layers, the layer tree, the
 * layer order and the style managers, and writes every other element back as it was.
 */
export class ProjectDocument {
  private index: LayerIndex | undefined;
  /** The name of each layer Steward manages, by id, once asked for; kept while no layer is added, removed or renamed. */
  private names: Map<string, string> | undefined;
  /**
   * The layer tree as last read, kept until the tree or a layer's name changes: a large project's
   * tree is read far more often than it changes. Shared by every caller, who must not change it.
   */
  private tree: LayerTree | undefined;
  /** The layer tree's nodes by name, kept by its replacements and dropped with `tree` or when its nodes change otherwise. */
  private currentTree: CurrentTree | undefined;
  /** Each layer's node by id (the first, should ids repeat), once asked for; kept as layers are added, replaced and removed. */
  private nodesById: Map<string, MapLayerNode> | undefined;
  /** Whether two layers had the same id when `nodesById` was made: a removal may then uncover the other. */
  private repeatedIds = false;
  /** What each unexpanded layer says of itself, read once: deferred layers never change. */
  private readonly deferredFacts = new WeakMap<XmlDeferred, DeferredLayerFacts>();
  /** The UTF-8 of the layer records written before (RECORDS, and the layer tree's layers), and of large containers' children as last written. */
  private readonly written = new WrittenMarkup();
  /** The layers made elements since the last write (undefined before the first): those the next write collapses. */
  private expanded: Set<XmlElement> | undefined;
  private readonly records = new LayerRecords(
    () => this.layerTree,
    () => firstChild(this.layerTree, 'custom-order'),
    () => path(this.document.root, 'layerorder'),
    () => snappingSettings(this.document.root),
  );

  /** The file's line breaks and indentation, which what Steward adds follows. */
  private readonly layout: Layout;

  private constructor(private readonly document: XmlDocument) {
    if (document.root.name !== 'qgis') {
      throw new ProjectFormatError(`a QGIS project has a <qgis> root, not <${document.root.name}>`);
    }
    this.layout = layoutOf(document.root, 0);
  }

  static parse(text: string): ProjectDocument {
    return new ProjectDocument(parseXml(text, { deferred: DEFERRED_ELEMENTS }));
  }

  /**
   * The layers of a project's text in the order of its `<projectlayers>`, read without parsing the
   * project (a version is checked before it is restored): each `<maplayer>` by its bytes, which
   * mostly were read before. Parsed whole when its markup is beyond a plain search.
   */
  static layersOf(content: Buffer): LayerEntry[] {
    const layers = elementBytes(content, 'projectlayers', 'maplayer');
    if (!layers) return ProjectDocument.parse(content.toString('utf8')).layers();
    return layers.flatMap((bytes) => knownLayerFacts(bytes).entry ?? []);
  }

  static create(project: NewProject): ProjectDocument {
    return new ProjectDocument(emptyProject(project));
  }

  /**
   * The project's text. Layers expanded or added by changes are kept as their text from then on, as
   * parsed layers are: a large project's next write then copies them instead of walking thousands
   * of elements again, and the cached document holds strings rather than trees.
   */
  serialize(): string {
    this.collapseLayers();
    this.rememberRecords();
    return serializeXml(this.document, this.written);
  }

  /**
   * The project's text in UTF-8, as it is stored, in pieces that follow one another: the layers'
   * bytes as they are and the per-layer records' UTF-8 reused, so that writing a large project costs
   * about what writing its file does.
   */
  encode(): Buffer[] {
    this.collapseLayers();
    this.rememberRecords();
    return serializeXmlUtf8(this.document, this.written);
  }

  /**
   * Remembers the markup of the per-layer records written for the first time. Layers are added at
   * the end of each container, so a container is read from its end back to the first record already
   * remembered (records made amid the others are remembered as they are made, `rememberMade`): a
   * record that would miss is written out in full like any element, never wrongly.
   */
  private rememberRecords(): void {
    for (const { path: names, record } of RECORDS) {
      const container = path(this.document.root, ...names);
      if (container) this.rememberNewRecords(container, record);
    }
    const tree = firstChild(this.document.root, 'layer-tree-group');
    if (tree) this.rememberNewRecords(tree, 'layer-tree-layer');
  }

  /** Remembers the `record` children of `container` (and of its layer tree groups) after the last remembered one. */
  private rememberNewRecords(container: XmlElement, record: string): void {
    const children = container.children;
    for (let index = children.length - 1; index >= 0; index--) {
      const child = children[index] as XmlNode;
      if (child.kind !== 'element') continue;
      if (child.name === 'layer-tree-group') this.rememberNewRecords(child, record);
      if (child.name !== record) continue;
      if (this.written.markupOf(child) !== undefined) return;
      this.rememberRecord(child);
    }
  }

  /**
   * Remembers records made amid the others (a new layer tree, a layer renamed or given a new
   * source), which the search from the end would not reach: each would be written afresh at every
   * write, half a large tree's once moved into a group.
   */
  private rememberMade(records: readonly XmlElement[]): void {
    for (const record of records) this.rememberRecord(record);
  }

  private rememberRecord(record: XmlElement): void {
    this.written.remember(record, Buffer.from(serializeElement(record), 'utf8'));
  }

  private collapseLayers(): void {
    const children = firstChild(this.document.root, 'projectlayers')?.children ?? [];
    if (this.expanded) {
      for (const node of this.expanded) {
        const index = children.indexOf(node);
        if (index >= 0) this.collapseLayer(index, node);
      }
    } else {
      children.forEach((node, index) => {
        if (node.kind === 'element' && node.name === 'maplayer') this.collapseLayer(index, node);
      });
    }
    this.expanded = new Set();
  }

  private collapseLayer(index: number, node: XmlElement): void {
    const collapsed: XmlDeferred = {
      kind: 'deferred',
      name: node.name,
      utf8: Buffer.from(serializeElement(node), 'utf8'),
    };
    const facts = layerFacts(node);
    KNOWN_LAYERS.remember(collapsed.utf8, facts);
    this.deferredFacts.set(collapsed, facts);
    this.replaceLayerNode(index, collapsed, facts.entry?.id);
  }

  get root(): XmlElement {
    return this.document.root;
  }

  metadata(): ProjectMetadata {
    return readMetadata(this.document.root);
  }

  changeMetadata(change: MetadataChange): void {
    writeMetadata(this.document.root, change, this.layout);
  }

  /** What QGIS Server publishes of the project, by service (project-services.ts). */
  services(): ServiceSettings {
    return readServices(this.document.root, this.layerNames());
  }

  /** Writes the service settings as Desktop's Project Properties > QGIS Server does; layers named must exist. */
  changeServices(change: ServicesChange): void {
    writeServices(this.document.root, change, this.layerNames(), this.layout);
  }

  private layerNames(): LayerNames {
    const names = this.namesById();
    return { name: (id) => names.get(id), id: (name) => this.layer(name)?.id };
  }

  private get projectLayers(): XmlElement {
    return ensureChild(this.document.root, 'projectlayers', 0, this.layout);
  }

  private get layerTree(): XmlElement {
    return ensureChild(this.document.root, 'layer-tree-group', 0, this.layout);
  }

  /** Reads a layer, or undefined for kinds Steward does not manage (mesh, vector tiles...). */
  private entryOf(node: MapLayerNode): LayerEntry | undefined {
    return node.kind === 'element' ? managedEntry(node) : this.factsOf(node).entry;
  }

  private factsOf(node: XmlDeferred): DeferredLayerFacts {
    let facts = this.deferredFacts.get(node);
    if (facts === undefined) {
      facts = knownLayerFacts(node.utf8);
      this.deferredFacts.set(node, facts);
    }
    return facts;
  }

  private mapLayerNodes(): MapLayerNode[] {
    return this.projectLayers.children.filter(
      (node): node is MapLayerNode => (node.kind === 'element' || node.kind === 'deferred') && node.name === 'maplayer',
    );
  }

  /** Layers in layer-tree order, then any layer the tree does not hold, keyed by name. */
  private layerEntries(): Map<string, LayerEntry> {
    if (this.index) return this.index.byName;
    const byId = new Map<string, LayerEntry>();
    for (const node of this.mapLayerNodes()) {
      const entry = this.entryOf(node);
      if (entry) byId.set(entry.id, entry);
    }
    const treeIds = treeLayerIds(this.layerTree);
    const byName = new Map<string, LayerEntry>();
    for (const id of new Set([...treeIds, ...byId.keys()])) {
      const entry = byId.get(id);
      if (entry && !byName.has(entry.name)) byName.set(entry.name, entry);
    }
    const inTree = new Set(treeIds);
    const simple = byName.size === byId.size && [...byId.keys()].every((id) => inTree.has(id));
    this.index = { byName, simple, ordered: true };
    return byName;
  }

  private mapLayerNode(id: string): MapLayerNode | undefined {
    if (!this.nodesById) {
      this.nodesById = new Map();
      this.repeatedIds = false;
      for (const node of this.mapLayerNodes()) {
        const entry = this.entryOf(node);
        if (entry && this.nodesById.has(entry.id)) this.repeatedIds = true;
        else if (entry) this.nodesById.set(entry.id, node);
      }
    }
    return this.nodesById.get(id);
  }

  /** Puts `node`, the layer `id` in another form, in the place of the `<projectlayers>` child at `index`. */
  private replaceLayerNode(index: number, node: MapLayerNode, id: string | undefined): void {
    this.projectLayers.children[index] = node;
    if (node.kind === 'element') this.expanded?.add(node);
    if (id !== undefined && this.nodesById?.has(id)) this.nodesById.set(id, node);
  }

  layers(): LayerEntry[] {
    const byName = this.layerEntries();
    if (this.index?.ordered !== false) return [...byName.values()];
    this.index = this.inTreeOrder(this.index);
    return [...this.index.byName.values()];
  }

  /**
   * Every layer Steward manages, in no set order, when they were listed since the document was
   * read and each is in the layer tree under a name of its own (else undefined: nothing is read
   * for it): what a restore of the version written of this document checks rather than read them
   * out of its file again.
   */
  everyLayer(): readonly LayerEntry[] | undefined {
    if (!this.index?.simple) return undefined;
    return (this.index.every ??= [...this.index.byName.values()]);
  }

  /** The index's entries, to be changed: its list of every layer is dropped. */
  private changeIndex(index: LayerIndex): Map<string, LayerEntry> {
    index.every = undefined;
    return index.byName;
  }

  layer(name: string): LayerEntry | undefined {
    return this.layerEntries().get(name);
  }

  /** The layer's element, expanded from its text on first use, for changes such as styles. */
  mapLayerElement(name: string): XmlElement | undefined {
    const entry = this.layer(name);
    const node = entry && this.mapLayerNode(entry.id);
    if (!node || node.kind === 'element') return node;
    const expanded = parseXml(deferredMarkup(node)).root;
    this.replaceLayerNode(this.projectLayers.children.indexOf(node), expanded, entry.id);
    return expanded;
  }

  /**
   * The name QGIS Server gives the layer in WMS: its id when the project's `WMSUseLayerIDs` is on,
   * else its short name when it has one, else its name.
   */
  wmsName(entry: LayerEntry): string {
    if (isTrue(childText(this.root, 'properties', 'WMSUseLayerIDs'))) return entry.id;
    return entry.shortName ?? entry.name;
  }

  published(entry: LayerEntry): PublishedLayer {
    return { ...entry, wmsName: this.wmsName(entry), identifiable: this.identifiable(entry) };
  }

  /** Whether QGIS identifies the layer: its flags, and the list projects before QGIS 3.4 kept instead. */
  private identifiable(entry: LayerEntry): boolean {
    const legacy = path(this.root, 'properties', 'Identify', 'disabledLayers');
    return (
      entry.identifiable && !(legacy && childElements(legacy, 'value').some((value) => childText(value) === entry.id))
    );
  }

  /** The name of each layer Steward manages, by id. */
  private namesById(): Map<string, string> {
    if (this.names) return this.names;
    const names = new Map<string, string>();
    for (const node of this.mapLayerNodes()) {
      const entry = this.entryOf(node);
      if (entry && !names.has(entry.id)) names.set(entry.id, entry.name);
    }
    this.names = names;
    return names;
  }

  /** The layer tree with its groups, and the drawing order when the project sets its own; not to be changed. */
  layerTreeOf(): LayerTree {
    if (this.tree) return this.tree;
    const names = this.namesById();
    this.tree = readLayerTree(this.layerTree, (id) => names.get(id));
    return this.tree;
  }

  /** Replaces the layer tree and the drawing order (`replaceLayerTree` of layer-tree.ts); answers the tree as written. */
  replaceLayerTree(request: LayerTreeRequest): LayerTree {
    const names = this.namesById();
    const order = ensureChild(this.document.root, 'layerorder', 0, this.layout);
    const nameOf = (id: string): string | undefined => names.get(id);
    this.currentTree ??= readCurrentTree(this.layerTree, nameOf);
    const { tree, made } = replaceLayerTree(
      this.layerTree,
      order,
      request,
      nameOf,
      this.untreedLayers(),
      this.currentTree,
    );
    this.rememberMade(made);
    this.records.forget();
    this.tree = tree;
    if (this.index?.simple) this.index.ordered = false;
    else this.index = undefined;
    return tree;
  }

  /** The layers the layer tree does not hold, by name: none when the index is simple. */
  private untreedLayers(): Map<string, UntreedLayer> {
    const untreed = new Map<string, UntreedLayer>();
    const layers = this.layerEntries();
    if (this.index?.simple) return untreed;
    const inTree = new Set(treeLayerIds(this.layerTree));
    for (const entry of layers.values()) {
      if (!inTree.has(entry.id)) untreed.set(entry.name, entry);
    }
    return untreed;
  }

  /**
   * A simple index's layers in the order of the layer tree as it is now: a new tree holds the same
   * layers, each once, so the index stays simple and need not read them again.
   */
  private inTreeOrder(index: LayerIndex): LayerIndex {
    const byId = new Map<string, LayerEntry>();
    for (const entry of index.byName.values()) byId.set(entry.id, entry);
    const byName = new Map<string, LayerEntry>();
    for (const id of treeLayerIds(this.layerTree)) {
      const entry = byId.get(id);
      if (entry) byName.set(entry.name, entry);
    }
    return { byName, simple: true, ordered: true };
  }

  /** The layer's own properties; its element is read from its text without being kept expanded. */
  layerProperties(name: string): LayerProperties | undefined {
    const entry = this.layer(name);
    const node = entry && this.mapLayerNode(entry.id);
    if (!node) return undefined;
    return readLayerProperties(node.kind === 'element' ? node : parseXml(deferredMarkup(node)).root);
  }

  /**
   * Changes the layer's properties (layer-properties.ts); a new name goes to its layer tree nodes
   * too, as QGIS names them after their layer. False when there is no such layer.
   */
  changeLayerProperties(name: string, change: LayerPropertiesChange): boolean {
    const element = this.mapLayerElement(name);
    const entry = this.layer(name);
    if (!element || !entry) return false;
    writeLayerProperties(element, change);
    if (change.name === undefined || change.name === name) {
      this.invalidate(name);
      return true;
    }
    this.rememberMade(renameLayerNodes(this.layerTree, entry.id, change.name));
    this.records.forget();
    this.invalidate();
    return true;
  }

  /** The fields the layer's styles, labels and filter read (layer-datasource.ts); undefined for no such layer. */
  layerFieldsUsed(name: string): string[] | undefined {
    const entry = this.layer(name);
    const node = entry && this.mapLayerNode(entry.id);
    if (!entry || !node) return undefined;
    const element = node.kind === 'element' ? node : parseXml(deferredMarkup(node)).root;
    return fieldsUsed(element, entry.datasource, entry.provider);
  }

  /** Gives the layer a new source in place, as `QgsMapLayer::setDataSource` does; false for no such layer. */
  changeLayerDatasource(name: string, source: NewDatasource): boolean {
    const element = this.mapLayerElement(name);
    const entry = this.layer(name);
    if (!element || !entry) return false;
    writeLayerDatasource(element, source);
    this.setTreeSources(new Map([[entry.id, source.datasource]]));
    this.invalidate(name);
    return true;
  }

  /**
   * Adds the layer at the bottom of the layer tree and of the drawing order. A project without a
   * `<layerorder>` (QGIS 2) gets none: QGIS reads its drawing order from the layer tree.
   */
  addLayer(definition: MapLayerDefinition): void {
    const layout = this.layout;
    const layer = indent(mapLayerElement(definition), 2, layout);
    appendChild(this.projectLayers, layer, 1, layout);
    this.expanded?.add(layer);
    const tree = this.layerTree;
    const entry = indent(layerTreeElement(definition), 2, layout);
    const customOrder = firstChild(tree, 'custom-order');
    const item = element('item', {}, [{ kind: 'text', value: definition.id }]);
    if (customOrder) {
      const index = tree.children.indexOf(customOrder);
      tree.children.splice(index, 0, entry, { kind: 'text', value: lineBreak(layout, 2) });
      appendChild(customOrder, item, 2, layout);
    } else {
      appendChild(tree, entry, 1, layout);
    }
    const order = firstChild(this.document.root, 'layerorder');
    const orderEntry = element('layer', { id: definition.id });
    if (order) appendChild(order, orderEntry, 1, layout);
    const snapping =
      definition.type === 'vector' && definition.geometry
        ? addSnapping(this.document.root, definition.id, layout)
        : undefined;
    this.records.added(definition.id, {
      tree: { parent: tree, node: entry },
      customOrder: customOrder && { parent: customOrder, node: item },
      order: order && { parent: order, node: orderEntry },
      snapping,
    });
    const added = managedEntry(layer);
    if (added && !this.nodesById?.has(added.id)) this.nodesById?.set(added.id, layer);
    if (added && !this.names?.has(added.id)) this.names?.set(added.id, added.name);
    this.tree = undefined;
    this.currentTree = undefined;
    if (this.index?.simple && added && !this.index.byName.has(added.name))
      this.changeIndex(this.index).set(added.name, added);
    else this.index = undefined;
  }

  /**
   * Removes the layer and what QGIS removes with it (docs/project-edits.md): its places in the
   * layer tree, the drawing orders, snapping, relations, other layers' joins, map themes and
   * layouts. Only the layers that name it are expanded from their text.
   */
  removeLayer(name: string): boolean {
    const entry = this.layer(name);
    if (!entry) return false;
    const layer = this.mapLayerNode(entry.id);
    const fields = layer ? fieldsOf(layer.kind === 'element' ? layer : parseXml(deferredMarkup(layer)).root) : [];
    if (layer) removeChild(this.projectLayers, layer);
    if (this.repeatedIds) this.nodesById = undefined;
    else this.nodesById?.delete(entry.id);
    const relations = removeProjectReferences(this.document.root, entry.id);
    const removed = { id: entry.id, name: entry.name, fields, relations };
    const children = this.projectLayers.children;
    children.forEach((node, index) => {
      if (node.kind === 'deferred' && node.name === 'maplayer' && this.factsOf(node).linked) {
        const expanded = parseXml(deferredMarkup(node)).root;
        if (removeLayerReferences(expanded, removed))
          this.replaceLayerNode(index, expanded, this.factsOf(node).entry?.id);
      } else if (node.kind === 'element' && node.name === 'maplayer') {
        removeLayerReferences(node, removed);
      }
    });
    this.records.remove(entry.id);
    if (this.index?.simple) this.changeIndex(this.index).delete(entry.name);
    else this.index = undefined;
    // Another layer of the same id may take its place.
    this.names = undefined;
    this.tree = undefined;
    this.currentTree = undefined;
    return true;
  }

  /**
   * Offers every layer Steward manages to `change` as an element, with what the project records of
   * it, for changes to a whole project such as moving its data; `change` answers whether it changed
   * the element, which then replaces the layer's text.
   */
  rewriteLayers(change: (element: XmlElement, entry: LayerEntry) => boolean): void {
    this.projectLayers.children.forEach((node, index) => {
      if ((node.kind !== 'element' && node.kind !== 'deferred') || node.name !== 'maplayer') return;
      const element = node.kind === 'element' ? node : parseXml(deferredMarkup(node)).root;
      const entry = managedEntry(element);
      if (!entry || !change(element, entry)) return;
      if (node.kind === 'deferred') this.replaceLayerNode(index, element, entry.id);
    });
    this.invalidate();
  }

  /**
   * Sets the source the layer tree records of each layer `sources` names by id, as QGIS writes it
   * beside the layer's datasource. A record changed is a new element, never one written before.
   */
  setTreeSources(sources: ReadonlyMap<string, string>): void {
    const made: XmlElement[] = [];
    const groups = [this.layerTree];
    for (let group = groups.pop(); group; group = groups.pop()) {
      group.children.forEach((child, index) => {
        if (child.kind !== 'element') return;
        if (child.name === 'layer-tree-group') groups.push(child);
        const source = child.name === 'layer-tree-layer' ? sources.get(child.attributes.get('id') ?? '') : undefined;
        if (source === undefined || !child.attributes.has('source')) return;
        const record = { ...child, attributes: new Map(child.attributes).set('source', source) };
        group.children[index] = record;
        made.push(record);
      });
    }
    this.rememberMade(made);
    this.records.forget();
    this.currentTree = undefined;
  }

  /**
   * Call after changing layer elements directly, so the next read sees the change: with a name,
   * after changing that layer only (not its name), whose entry alone is then read again.
   */
  invalidate(name?: string): void {
    const entry = name === undefined ? undefined : this.index?.byName.get(name);
    const node = entry && this.mapLayerNode(entry.id);
    const changed = node && this.entryOf(node);
    if (this.index && entry && changed?.name === entry.name) {
      this.changeIndex(this.index).set(entry.name, changed);
    } else {
      this.index = undefined;
      this.nodesById = undefined;
      this.names = undefined;
      this.tree = undefined;
      this.currentTree = undefined;
    }
  }
}
