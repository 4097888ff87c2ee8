import { childElements, childText, removeChild, type XmlElement } from './xml/node.js';

/** One of a layer's records outside `<projectlayers>`, and the element holding it. */
export interface LayerRecord {
  parent: XmlElement;
  node: XmlElement;
}

/** The records a layer is added with, as `addLayer` placed them. */
export interface AddedRecords {
  tree: LayerRecord;
  customOrder?: LayerRecord;
  /** Absent when the project has no `<layerorder>` (QGIS 2 projects). */
  order?: LayerRecord;
  snapping?: LayerRecord;
}

/** Each kind's records by layer id, in document order. */
type Places = Record<'tree' | 'customOrder' | 'order' | 'snapping', Map<string, LayerRecord[]>>;

function push(places: Map<string, LayerRecord[]>, id: string, record: LayerRecord): void {
  const records = places.get(id);
  if (records) records.push(record);
  else places.set(id, [record]);
}

/** The layer tree's layers, by id, groups included in document order. */
function readTree(group: XmlElement, places: Map<string, LayerRecord[]>): void {
  for (const node of childElements(group)) {
    if (node.name === 'layer-tree-layer') push(places, node.attributes.get('id') ?? '', { parent: group, node });
    else if (node.name === 'layer-tree-group') readTree(node, places);
  }
}

function readRecords(
  parent: XmlElement | undefined,
  name: string,
  idOf: (node: XmlElement) => string,
): Map<string, LayerRecord[]> {
  const places = new Map<string, LayerRecord[]>();
  if (!parent) return places;
  for (const node of childElements(parent, name)) push(places, idOf(node), { parent, node });
  return places;
}

/**
 * A layer's records that Steward adds and removes with it outside `<projectlayers>`: its layer tree
 * entry, its custom order item, its `<layerorder>` entry and its individual snapping settings
 * (QgsSnappingConfig drops them with the layer), found by the layer's id. They are read
 * in one pass when a removal first needs them and kept by the additions and removals made here, so
 * removing one layer of a thousand does not read the thousand's records again.
 */
export class LayerRecords {
  private places: Places | undefined;

  constructor(
    private readonly tree: () => XmlElement,
    private readonly customOrder: () => XmlElement | undefined,
    private readonly order: () => XmlElement | undefined,
    private readonly snapping: () => XmlElement | undefined,
  ) {}

  added(id: string, records: AddedRecords): void {
    if (!this.places) return;
    push(this.places.tree, id, records.tree);
    if (records.customOrder) push(this.places.customOrder, id, records.customOrder);
    if (records.order) push(this.places.order, id, records.order);
    if (records.snapping) push(this.places.snapping, id, records.snapping);
  }

  /** Call after the records moved (a new layer tree): the next removal reads them again. */
  forget(): void {
    this.places = undefined;
  }

  /** Removes the layer's first layer tree entry, as QGIS does, and all its other records. */
  remove(id: string): void {
    const places = this.read();
    const tree = places.tree.get(id) ?? [];
    const first = tree.shift();
    if (first) removeChild(first.parent, first.node);
    if (tree.length === 0) places.tree.delete(id);
    for (const kind of ['customOrder', 'order', 'snapping'] as const) {
      for (const record of places[kind].get(id) ?? []) removeChild(record.parent, record.node);
      places[kind].delete(id);
    }
  }

  private read(): Places {
    if (this.places) return this.places;
    const tree = new Map<string, LayerRecord[]>();
    readTree(this.tree(), tree);
    this.places = {
      tree,
      customOrder: readRecords(this.customOrder(), 'item', (item) => childText(item)),
      order: readRecords(this.order(), 'layer', (layer) => layer.attributes.get('id') ?? ''),
      snapping: readRecords(this.snapping(), 'layer-setting', (setting) => setting.attributes.get('id') ?? ''),
    };
    return this.places;
  }
}
