/**
 * What a project publishes through QGIS Server's services, as QGIS Desktop's Project Properties >
 * QGIS Server writes it in the project's properties (qgsprojectproperties.cpp) and QGIS Server reads
 * it (qgsserverprojectutils.cpp): the service's description and contact, the WMS's CRSs, extent,
 * image limits and feature info, the layers WFS (and with it OGC API Features), WCS and WMTS publish.
 * Layers are named here; the project lists them by id.
 */
import {
  property,
  propertyFlag,
  propertyList,
  propertyNumber,
  propertyText,
  type PropertyValue,
  removeProperty,
  writeProperty,
} from './project-properties.js';
import { type Layout } from './xml/layout.js';
import { type XmlElement } from './xml/node.js';

export interface Contact {
  person: string;
  organization: string;
  position: string;
  mail: string;
  phone: string;
}

export interface FeatureInfo {
  /** WMSAddWktGeometry: GetFeatureInfo answers each feature's geometry. */
  geometry: boolean;
  /** WMSSegmentizeFeatureInfoGeometry: curves in that geometry as segments. */
  segmentize: boolean;
  /** WMSPrecision: decimals of its coordinates. */
  precision: number;
  /** WMSFeatureInfoUseAttributeFormSettings: fields as the attribute form shows them. */
  use_form_settings: boolean;
}

export type Extent = [number, number, number, number];

export interface WmsSettings {
  /** The CRSs the capabilities advertise; empty: QGIS Server's own choice (the project's, 4326, 3857). */
  crs: string[];
  /** The advertised extent (xmin, ymin, xmax, ymax in the project CRS); null: the layers'. */
  extent: Extent | null;
  max_width: number | null;
  max_height: number | null;
  /** JPEG quality (1 to 100); null: QGIS Server's default. */
  image_quality: number | null;
  feature_info: FeatureInfo;
  /** Layers named by their ids rather than their (short) names. */
  use_layer_ids: boolean;
  /** The URL the capabilities advertise; empty: the request's. */
  url: string;
}

export interface WfsSettings {
  /** Whether WFS publishes any layer (QGIS Server publishes none otherwise). */
  enabled: boolean;
  layers: string[];
  /** Decimals of the coordinates of each published layer that sets them (QGIS Server: 6 otherwise). */
  precision: Record<string, number>;
  insert: string[];
  update: string[];
  delete: string[];
  url: string;
}

export interface WcsSettings {
  enabled: boolean;
  layers: string[];
  url: string;
}

export type WmtsFormat = 'image/png' | 'image/jpeg';

/** A tile grid (TileMatrixSet) as Desktop's WMTS grid table sets it. */
export interface WmtsGrid {
  crs: string;
  /** The top left corner, in the grid CRS. */
  top: number;
  left: number;
  /** The scale denominator of level 0; each level halves it. */
  scale_denominator: number;
  last_level: number;
}

/**
 * The grids QGIS Server fixes (only their last level is read), with the corner and scale Desktop
 * shows for them (qgsprojectproperties.cpp, addWmtsGrid).
 */
export const FIXED_WMTS_GRIDS: Readonly<Record<string, Omit<WmtsGrid, 'crs' | 'last_level'>>> = {
  'EPSG:3857': { top: 20037508.342789248, left: -20037508.342789248, scale_denominator: 559082264.0287179 },
  'EPSG:4326': { top: 90, left: -180, scale_denominator: 279541132.0143589 },
};

export interface WmtsSettings {
  enabled: boolean;
  /** The whole project as one tiled layer. */
  project: boolean;
  groups: string[];
  layers: string[];
  /** The tile formats of each layer or group published (the project's under ""). */
  formats: Record<string, WmtsFormat[]>;
  /**
   * The tile grids the project defines; null when it defines none: QGIS Server's own then, one
   * per WMS CRS. Empty (as Desktop saves no grid ticked): QGIS Server publishes no TileMatrixSet.
   */
  grids: WmtsGrid[] | null;
  url: string;
}

export interface ServiceSettings {
  title: string;
  abstract: string;
  keywords: string[];
  online_resource: string;
  fees: string;
  access_constraints: string;
  /** Desktop's "Service capabilities": whether the capabilities tell the contact, fees and constraints. */
  advertised: boolean;
  contact: Contact;
  wms: WmsSettings;
  wfs: WfsSettings;
  wcs: WcsSettings;
  wmts: WmtsSettings;
  /** QGIS Server serves OGC API Features (`/wfs3`) for the layers WFS publishes. */
  ogcapi_features: { enabled: boolean; collections: string[] };
}

type Writable<T> = Partial<Omit<T, 'enabled'>>;

/** What a PATCH sets: any field, those of a service or of the contact one by one. */
export interface ServicesChange {
  title?: string;
  abstract?: string;
  keywords?: string[];
  online_resource?: string;
  fees?: string;
  access_constraints?: string;
  advertised?: boolean;
  contact?: Partial<Contact>;
  wms?: Omit<Writable<WmsSettings>, 'feature_info'> & { feature_info?: Partial<FeatureInfo> };
  wfs?: Writable<WfsSettings>;
  wcs?: Writable<WcsSettings>;
  wmts?: Writable<WmtsSettings>;
}

/** The project's layer ids and names, both ways. */
export interface LayerNames {
  name(id: string): string | undefined;
  id(name: string): string | undefined;
}

const TEXTS = {
  title: 'WMSServiceTitle',
  abstract: 'WMSServiceAbstract',
  online_resource: 'WMSOnlineResource',
  fees: 'WMSFees',
  access_constraints: 'WMSAccessConstraints',
} as const;

const CONTACT = {
  person: 'WMSContactPerson',
  organization: 'WMSContactOrganization',
  position: 'WMSContactPosition',
  mail: 'WMSContactMail',
  phone: 'WMSContactPhone',
} as const;

const FEATURE_INFO_FLAGS = {
  geometry: 'WMSAddWktGeometry',
  segmentize: 'WMSSegmentizeFeatureInfoGeometry',
  use_form_settings: 'WMSFeatureInfoUseAttributeFormSettings',
} as const;

/** Keys Desktop removes when the field is empty (null here). */
const OPTIONAL_NUMBERS = {
  max_width: 'WMSMaxWidth',
  max_height: 'WMSMaxHeight',
  image_quality: 'WMSImageQuality',
} as const;

const WMTS_FORMAT_KEYS: Record<WmtsFormat, string> = { 'image/png': 'WMTSPngLayers', 'image/jpeg': 'WMTSJpegLayers' };

function names(root: XmlElement, path: string[], layers: LayerNames): string[] {
  return propertyList(root, path).flatMap((id) => layers.name(id) ?? []);
}

function readWms(root: XmlElement): WmsSettings {
  const extent = propertyList(root, ['WMSExtent']).map(Number);
  const optional = (key: string): number | null => propertyNumber(root, [key]) ?? null;
  return {
    crs: propertyList(root, ['WMSCrsList']).filter(Boolean),
    extent: extent.length === 4 && extent.every(Number.isFinite) ? (extent as Extent) : null,
    max_width: optional(OPTIONAL_NUMBERS.max_width),
    max_height: optional(OPTIONAL_NUMBERS.max_height),
    image_quality: optional(OPTIONAL_NUMBERS.image_quality),
    feature_info: {
      geometry: propertyFlag(root, [FEATURE_INFO_FLAGS.geometry]),
      segmentize: propertyFlag(root, [FEATURE_INFO_FLAGS.segmentize]),
      precision: propertyNumber(root, ['WMSPrecision']) ?? 6,
      use_form_settings: propertyFlag(root, [FEATURE_INFO_FLAGS.use_form_settings]),
    },
    use_layer_ids: propertyFlag(root, ['WMSUseLayerIDs']),
    url: propertyText(root, ['WMSUrl']),
  };
}

function readWfs(root: XmlElement, layers: LayerNames): WfsSettings {
  const ids = propertyList(root, ['WFSLayers']).filter((id) => layers.name(id) !== undefined);
  const precision: Record<string, number> = {};
  for (const id of ids) {
    const value = propertyNumber(root, ['WFSLayersPrecision', id]);
    if (value !== undefined) precision[layers.name(id) as string] = value;
  }
  const published = ids.map((id) => layers.name(id) as string);
  return {
    enabled: published.length > 0,
    layers: published,
    precision,
    insert: names(root, ['WFSTLayers', 'Insert'], layers),
    update: names(root, ['WFSTLayers', 'Update'], layers),
    delete: names(root, ['WFSTLayers', 'Delete'], layers),
    url: propertyText(root, ['WFSUrl']),
  };
}

function readWmts(root: XmlElement, layers: LayerNames): WmtsSettings {
  const project = propertyFlag(root, ['WMTSLayers', 'Project']);
  const groups = propertyList(root, ['WMTSLayers', 'Group']);
  const layerIds = propertyList(root, ['WMTSLayers', 'Layer']).filter((id) => layers.name(id) !== undefined);
  const formats: Record<string, WmtsFormat[]> = {};
  const add = (name: string, format: WmtsFormat) => (formats[name] ??= []).push(format);
  for (const [format, key] of Object.entries(WMTS_FORMAT_KEYS) as Array<[WmtsFormat, string]>) {
    if (project && propertyFlag(root, [key, 'Project'])) add('', format);
    const ofGroups = new Set(propertyList(root, [key, 'Group']));
    for (const name of groups) if (ofGroups.has(name)) add(name, format);
    const ofLayers = new Set(propertyList(root, [key, 'Layer']));
    for (const id of layerIds) if (ofLayers.has(id)) add(layers.name(id) as string, format);
  }
  const published = layerIds.map((id) => layers.name(id) as string);
  return {
    enabled: project || groups.length > 0 || published.length > 0,
    project,
    groups,
    layers: published,
    formats,
    grids: readGrids(root),
    url: propertyText(root, ['WMTSUrl']),
  };
}

/**
 * The grids QGIS Server reads: a `Config` entry ("crs,top,left,scale,last level") per listed CRS;
 * null without the list, which leaves QGIS Server its own (qgswmtsutils.cpp, `gridsDefined`).
 */
function readGrids(root: XmlElement): WmtsGrid[] | null {
  if (!property(root, ['WMTSGrids', 'CRS'])) return null;
  const listed = new Set(propertyList(root, ['WMTSGrids', 'CRS']));
  return propertyList(root, ['WMTSGrids', 'Config']).flatMap((config) => {
    const [crs = '', ...values] = config.split(',');
    const [top, left, scale, last] = values.map(Number);
    if (!listed.has(crs) || values.length < 4 || ![top, left, scale, last].every(Number.isFinite)) return [];
    return [{ crs, top, left, scale_denominator: scale, last_level: Math.trunc(last as number) } as WmtsGrid];
  });
}

export function readServices(root: XmlElement, layers: LayerNames): ServiceSettings {
  const wfs = readWfs(root, layers);
  const wcs = names(root, ['WCSLayers'], layers);
  return {
    title: propertyText(root, [TEXTS.title]),
    abstract: propertyText(root, [TEXTS.abstract]),
    keywords: propertyList(root, ['WMSKeywordList']).filter(Boolean),
    online_resource: propertyText(root, [TEXTS.online_resource]),
    fees: propertyText(root, [TEXTS.fees]),
    access_constraints: propertyText(root, [TEXTS.access_constraints]),
    advertised: propertyFlag(root, ['WMSServiceCapabilities']),
    contact: {
      person: propertyText(root, [CONTACT.person]),
      organization: propertyText(root, [CONTACT.organization]),
      position: propertyText(root, [CONTACT.position]),
      mail: propertyText(root, [CONTACT.mail]),
      phone: propertyText(root, [CONTACT.phone]),
    },
    wms: readWms(root),
    wfs,
    wcs: { enabled: wcs.length > 0, layers: wcs, url: propertyText(root, ['WCSUrl']) },
    wmts: readWmts(root, layers),
    ogcapi_features: { enabled: wfs.enabled, collections: wfs.layers },
  };
}

/** Writes the project's properties, `layout` its indentation. */
class PropertyWriter {
  constructor(
    private readonly root: XmlElement,
    private readonly layout: Layout,
    private readonly layers: LayerNames,
  ) {}

  set(path: string[], value: PropertyValue | null | undefined): void {
    if (value === undefined) return;
    if (value === null) removeProperty(this.root, path);
    else writeProperty(this.root, path, value, this.layout);
  }

  ids(names: readonly string[] | undefined): string[] | undefined {
    return names?.map((name) => this.layers.id(name) as string);
  }
}

function writeWms(writer: PropertyWriter, wms: NonNullable<ServicesChange['wms']>): void {
  // Desktop removes the restriction rather than write an empty list, and the QGIS 2 list with it.
  if (wms.crs !== undefined) {
    writer.set(['WMSEpsgList'], null);
    writer.set(['WMSCrsList'], wms.crs.length > 0 ? wms.crs : null);
  }
  writer.set(['WMSExtent'], wms.extent === null ? null : wms.extent?.map(String));
  for (const field of ['max_width', 'max_height', 'image_quality'] as const)
    writer.set([OPTIONAL_NUMBERS[field]], wms[field]);
  const info = wms.feature_info ?? {};
  for (const field of ['geometry', 'segmentize', 'use_form_settings'] as const)
    writer.set([FEATURE_INFO_FLAGS[field]], info[field]);
  // Desktop writes the precision as its spin box's text.
  writer.set(['WMSPrecision'], info.precision === undefined ? undefined : String(info.precision));
  writer.set(['WMSUseLayerIDs'], wms.use_layer_ids);
  writer.set(['WMSUrl'], wms.url);
}

function writeWfs(writer: PropertyWriter, wfs: NonNullable<ServicesChange['wfs']>): void {
  writer.set(['WFSLayers'], writer.ids(wfs.layers));
  for (const [name, precision] of Object.entries(wfs.precision ?? {}))
    writer.set(['WFSLayersPrecision', writer.ids([name])?.[0] as string], precision);
  writer.set(['WFSTLayers', 'Insert'], writer.ids(wfs.insert));
  writer.set(['WFSTLayers', 'Update'], writer.ids(wfs.update));
  writer.set(['WFSTLayers', 'Delete'], writer.ids(wfs.delete));
  writer.set(['WFSUrl'], wfs.url);
}

function writeWmts(writer: PropertyWriter, wmts: NonNullable<ServicesChange['wmts']>, current: WmtsSettings): void {
  const project = wmts.project ?? current.project;
  const groups = wmts.groups ?? current.groups;
  const layers = wmts.layers ?? current.layers;
  // An item published without formats gets both, as Desktop's check box gives it.
  const both: WmtsFormat[] = ['image/png', 'image/jpeg'];
  const formats = (name: string): WmtsFormat[] => wmts.formats?.[name] ?? current.formats[name] ?? both;
  writer.set(['WMTSLayers', 'Project'], project);
  writer.set(['WMTSLayers', 'Group'], groups);
  writer.set(['WMTSLayers', 'Layer'], writer.ids(layers));
  for (const [format, key] of Object.entries(WMTS_FORMAT_KEYS) as Array<[WmtsFormat, string]>) {
    writer.set([key, 'Project'], project && formats('').includes(format));
    writer.set(
      [key, 'Group'],
      groups.filter((name) => formats(name).includes(format)),
    );
    writer.set([key, 'Layer'], writer.ids(layers.filter((name) => formats(name).includes(format))));
  }
  if (wmts.grids !== undefined) {
    // null takes the keys away, leaving QGIS Server its own grids; an empty list leaves it none.
    const { grids } = wmts;
    writer.set(['WMTSGrids', 'CRS'], grids?.map((grid) => grid.crs) ?? null);
    writer.set(
      ['WMTSGrids', 'Config'],
      grids?.map((grid) => [grid.crs, grid.top, grid.left, grid.scale_denominator, grid.last_level].join(',')) ?? null,
    );
  }
  writer.set(['WMTSUrl'], wmts.url);
}

/**
 * Writes `change` as Desktop's Project Properties write it; the layers it names must be the
 * project's (services/project-services.ts checks them).
 */
export function writeServices(root: XmlElement, change: ServicesChange, layers: LayerNames, layout: Layout): void {
  const writer = new PropertyWriter(root, layout, layers);
  for (const field of Object.keys(TEXTS) as Array<keyof typeof TEXTS>) writer.set([TEXTS[field]], change[field]);
  writer.set(['WMSKeywordList'], change.keywords);
  writer.set(['WMSServiceCapabilities'], change.advertised);
  for (const field of Object.keys(CONTACT) as Array<keyof Contact>)
    writer.set([CONTACT[field]], change.contact?.[field]);
  if (change.wms) writeWms(writer, change.wms);
  if (change.wfs) writeWfs(writer, change.wfs);
  if (change.wcs) {
    writer.set(['WCSLayers'], writer.ids(change.wcs.layers));
    writer.set(['WCSUrl'], change.wcs.url);
  }
  if (change.wmts) writeWmts(writer, change.wmts, readWmts(root, layers));
}
