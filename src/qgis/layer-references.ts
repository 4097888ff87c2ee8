/**
 * The places of a .qgs that name a layer by id outside its own `<maplayer>`, and what QGIS does to
 * them when the layer is added or removed through QgsProject (see docs/project-edits.md).
 */
import { type LayerRecord } from './layer-records.js';
import { type Layout } from './xml/layout.js';
import {
  appendChild,
  childElements,
  childText,
  element,
  firstChild,
  path,
  removeChild,
  type XmlElement,
  type XmlNode,
} from './xml/node.js';

function removeWhere(parent: XmlElement | undefined, name: string, matches: (child: XmlElement) => boolean): number {
  if (!parent) return 0;
  let removed = 0;
  for (const child of childElements(parent, name)) {
    if (matches(child)) {
      removeChild(parent, child);
      removed += 1;
    }
  }
  return removed;
}

function hasId(id: string): (child: XmlElement) => boolean {
  return (child) => child.attributes.get('id') === id;
}

/** Elements named `name` anywhere under `root`, the root included. */
function descendants(root: XmlElement, name: string): XmlElement[] {
  const found: XmlElement[] = [];
  const visit = (node: XmlNode): void => {
    if (node.kind !== 'element') return;
    if (node.name === name) found.push(node);
    node.children.forEach(visit);
  };
  visit(root);
  return found;
}

/** QgsRelationManager: relations from or to the layer; returns the ids of those removed. */
function removeRelations(root: XmlElement, id: string): Set<string> {
  const removed = new Set<string>();
  const involves = (relation: XmlElement): boolean =>
    relation.attributes.get('referencingLayer') === id || relation.attributes.get('referencedLayer') === id;
  for (const container of ['relations', 'polymorphicRelations']) {
    const parent = firstChild(root, container);
    if (!parent) continue;
    for (const relation of [...childElements(parent, 'relation'), ...childElements(parent, 'polymorphicRelation')]) {
      if (!involves(relation)) continue;
      removed.add(relation.attributes.get('id') ?? '');
      removeChild(parent, relation);
    }
  }
  return removed;
}

/** QgsMapThemeCollection: the layer's records in every theme. */
function removeFromThemes(root: XmlElement, id: string): void {
  for (const theme of childElements(firstChild(root, 'visibility-presets') ?? element('none'), 'visibility-preset')) {
    for (const name of ['layer', 'expanded-legend-nodes', 'checked-legend-nodes']) removeWhere(theme, name, hasId(id));
  }
}

/**
 * Layouts and reports: maps drop the layer from their layer set and style overrides; legends with
 * their own model keep its node but no longer name its source (QgsLayerTreeLayer without a layer),
 * and drop it from their custom order; an atlas over it is turned off.
 */
function removeFromLayouts(root: XmlElement, id: string): void {
  const layouts = firstChild(root, 'Layouts');
  if (!layouts) return;
  for (const set of descendants(layouts, 'LayerSet')) removeWhere(set, 'Layer', (layer) => childText(layer) === id);
  for (const styles of descendants(layouts, 'LayerStyles')) {
    removeWhere(styles, 'LayerStyle', (style) => style.attributes.get('layerid') === id);
  }
  for (const node of descendants(layouts, 'layer-tree-layer')) {
    if (node.attributes.get('id') !== id) continue;
    node.attributes.delete('providerKey');
    node.attributes.delete('source');
  }
  for (const order of descendants(layouts, 'custom-order')) {
    removeWhere(order, 'item', (item) => childText(item) === id);
  }
  // QgsLayoutAtlas: an atlas over the layer loses its coverage layer and is turned off.
  for (const atlas of descendants(layouts, 'Atlas')) {
    if (atlas.attributes.get('coverageLayer') !== id) continue;
    atlas.attributes.set('coverageLayer', '');
    atlas.attributes.set('enabled', '0');
    for (const name of ['coverageLayerName', 'coverageLayerProvider', 'coverageLayerSource']) {
      atlas.attributes.delete(name);
    }
  }
}

/**
 * Everything outside the layers that QGIS removes with the layer but the records of layer-records.ts;
 * returns the removed relations' ids.
 */
export function removeProjectReferences(root: XmlElement, id: string): Set<string> {
  const relations = removeRelations(root, id);
  removeFromThemes(root, id);
  removeFromLayouts(root, id);
  return relations;
}

/** The removed layer as the other layers' joins and relations knew it. */
export interface RemovedLayer {
  id: string;
  name: string;
  /** Its fields, as its `<fieldConfiguration>` lists them. */
  fields: string[];
  relations: Set<string>;
}

export function fieldsOf(mapLayer: XmlElement): string[] {
  const configuration = firstChild(mapLayer, 'fieldConfiguration');
  return configuration ? childElements(configuration, 'field').map((field) => field.attributes.get('name') ?? '') : [];
}

/** The layer's joins to other layers' fields (`<vectorjoins>`), each naming its layer by `joinLayerId`. */
export function layerJoins(mapLayer: XmlElement): XmlElement[] {
  const joins = firstChild(mapLayer, 'vectorjoins');
  return joins ? childElements(joins, 'join') : [];
}

/**
 * The fields a join adds to its layer, as QgsVectorLayerJoinBuffer names them: each field of the
 * joined layer it takes (its subset, else all but the join field) and its name on the layer.
 */
export function joinedFieldNames(
  join: XmlElement,
  joined: { name: string; fields: string[] },
): Array<{ field: string; name: string }> {
  const subset = firstChild(join, 'joinFieldsSubset');
  const joinField = join.attributes.get('joinFieldName') ?? '';
  const taken = subset
    ? childElements(subset, 'field').map((field) => field.attributes.get('name') ?? '')
    : joined.fields.filter((field) => field !== joinField);
  const prefix =
    join.attributes.get('hasCustomPrefix') === '1' ? (join.attributes.get('customPrefix') ?? '') : `${joined.name}_`;
  return taken.map((field) => ({ field, name: prefix + field }));
}

/** The per-field configuration of `fields`, which QGIS no longer writes once they are gone. */
function removeFieldConfiguration(mapLayer: XmlElement, fields: ReadonlySet<string>): void {
  const byName = (attribute: string) => (child: XmlElement) => fields.has(child.attributes.get(attribute) ?? '');
  removeWhere(firstChild(mapLayer, 'fieldConfiguration'), 'field', byName('name'));
  removeWhere(firstChild(mapLayer, 'aliases'), 'alias', byName('field'));
  removeWhere(firstChild(mapLayer, 'defaults'), 'default', byName('field'));
  removeWhere(firstChild(mapLayer, 'constraints'), 'constraint', byName('field'));
  removeWhere(firstChild(mapLayer, 'constraintExpressions'), 'constraint', byName('field'));
}

/** Whether the layer holds joins or relations, the only places it names other layers by id. */
export function namesOtherLayers(mapLayer: XmlElement): boolean {
  const holds = (container: string, name: string): boolean => {
    const parent = firstChild(mapLayer, container);
    return parent !== undefined && firstChild(parent, name) !== undefined;
  };
  return (
    holds('vectorjoins', 'join') || holds('referencedLayers', 'relation') || holds('referencingLayers', 'relation')
  );
}

/**
 * What another layer holds of the removed one: its joins to it with the fields they added
 * (QgsVectorLayerJoinBuffer), and the relations to it it records for itself. Returns whether
 * anything changed.
 */
export function removeLayerReferences(mapLayer: XmlElement, removed: RemovedLayer): boolean {
  let changed = false;
  const joins = firstChild(mapLayer, 'vectorjoins');
  if (joins) {
    const gone = new Set<string>();
    for (const join of layerJoins(mapLayer)) {
      if (join.attributes.get('joinLayerId') !== removed.id) continue;
      joinedFieldNames(join, removed).forEach(({ name }) => gone.add(name));
      removeChild(joins, join);
      changed = true;
    }
    if (gone.size > 0) removeFieldConfiguration(mapLayer, gone);
  }
  for (const container of ['referencedLayers', 'referencingLayers']) {
    const count = removeWhere(
      firstChild(mapLayer, container),
      'relation',
      (relation) =>
        removed.relations.has(relation.attributes.get('id') ?? '') ||
        relation.attributes.get('referencedLayer') === removed.id ||
        relation.attributes.get('referencingLayer') === removed.id,
    );
    changed ||= count > 0;
  }
  return changed;
}

/** Where a project keeps its layers' individual snapping settings, if it does. */
export function snappingSettings(root: XmlElement): XmlElement | undefined {
  return path(root, 'snapping-settings', 'individual-layer-settings');
}

/**
 * QgsSnappingConfig::addLayers: a new vector layer gets individual settings, with QGIS's default
 * ones, when the project keeps individual settings. Returns the record it added.
 */
export function addSnapping(root: XmlElement, id: string, layout: Layout): LayerRecord | undefined {
  const settings = snappingSettings(root);
  if (!settings) return undefined;
  const setting = element('layer-setting', {
    id,
    enabled: '1',
    type: '1',
    tolerance: '12',
    units: '1',
    minScale: '0',
    maxScale: '0',
  });
  appendChild(settings, setting, 2, layout);
  return { parent: settings, node: setting };
}
