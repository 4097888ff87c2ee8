import { type CrsDefinition, spatialRefSysElement } from './crs.js';
import { fixedInstantElement } from './temporal.js';
import { element, textElement, type XmlElement } from './xml/node.js';

export type LayerType = 'vector' | 'raster';

/** [xmin, ymin, xmax, ymax] */
export type Extent = readonly [number, number, number, number];

/** What Steward knows of a datasource when it adds it to a project. */
export interface MapLayerDefinition {
  id: string;
  name: string;
  type: LayerType;
  /** QGIS provider key: `ogr`, `gdal` or `postgres`. */
  provider: string;
  datasource: string;
  crs: CrsDefinition;
  extent: Extent;
  wgs84Extent: Extent;
  /** Vector only: QGIS's WKB type name (`MultiPolygon`) and geometry class (`Polygon`). */
  wkbType?: string;
  geometry?: string;
  /** Raster only: the instant of its fixed temporal range [instant, instant], as `utcInstant` gives it. */
  temporalInstant?: string;
  /** The elements of the current style as the style codec writes them (`styleElements`), blend mode included. */
  styleElements: XmlElement[];
}

/** A QGIS layer id: the name made safe plus a random suffix, as QGIS forms them. */
export function newLayerId(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_]/g, '_');
  return `${safe}_${crypto.randomUUID().replace(/-/g, '_')}`;
}

function extentElement(name: string, extent: Extent): XmlElement {
  const [xmin, ymin, xmax, ymax] = extent;
  return element(name, {}, [
    textElement('xmin', formatNumber(xmin)),
    textElement('ymin', formatNumber(ymin)),
    textElement('xmax', formatNumber(xmax)),
    textElement('ymax', formatNumber(ymax)),
  ]);
}

/** Numbers as QGIS writes them: shortest round-trip form, no exponent for ordinary magnitudes. */
export function formatNumber(value: number): string {
  return Number.isInteger(value) ? value.toFixed(0) : String(value);
}

function layerAttributes(definition: MapLayerDefinition): Record<string, string> {
  const common = {
    styleCategories: 'AllStyleCategories',
    hasScaleBasedVisibilityFlag: '0',
    maxScale: '0',
    minScale: '1e+08',
    autoRefreshEnabled: '0',
    autoRefreshTime: '0',
    refreshOnNotifyEnabled: '0',
    refreshOnNotifyMessage: '',
    legendPlaceholderImage: '',
    type: definition.type,
  };
  if (definition.type === 'raster') return common;
  return {
    ...common,
    geometry: definition.geometry ?? 'Unknown',
    wkbType: definition.wkbType ?? 'Unknown',
    readOnly: '0',
    labelsEnabled: '0',
    simplifyDrawingHints: '1',
    simplifyDrawingTol: '1',
    simplifyLocal: '1',
    simplifyAlgorithm: '0',
    simplifyMaxScale: '1',
    symbologyReferenceScale: '-1',
  };
}

function flagsElement(): XmlElement {
  return element('flags', {}, [
    textElement('Identifiable', '1'),
    textElement('Removable', '1'),
    textElement('Searchable', '1'),
    textElement('Private', '0'),
  ]);
}

/** The `<maplayer>` element of a new layer, with the children QGIS needs to load and draw it. */
export function mapLayerElement(definition: MapLayerDefinition): XmlElement {
  const provider =
    definition.type === 'vector'
      ? textElement('provider', definition.provider, { encoding: 'UTF-8' })
      : textElement('provider', definition.provider);
  return element('maplayer', layerAttributes(definition), [
    extentElement('extent', definition.extent),
    extentElement('wgs84extent', definition.wgs84Extent),
    textElement('id', definition.id),
    textElement('datasource', definition.datasource),
    element('keywordList', {}, [textElement('value', '')]),
    textElement('layername', definition.name),
    element('srs', {}, [spatialRefSysElement(definition.crs)]),
    provider,
    element('map-layer-style-manager', { current: 'default' }, [element('map-layer-style', { name: 'default' })]),
    flagsElement(),
    ...(definition.temporalInstant === undefined ? [] : [fixedInstantElement(definition.temporalInstant)]),
    ...definition.styleElements,
  ]);
}

/** The `<layer-tree-layer>` entry QGIS needs to publish the layer (QGIS Server skips layers without one). */
export function layerTreeElement(
  definition: Pick<MapLayerDefinition, 'id' | 'name' | 'datasource' | 'provider'>,
  visible = true,
): XmlElement {
  return element(
    'layer-tree-layer',
    {
      expanded: '1',
      checked: visible ? 'Qt::Checked' : 'Qt::Unchecked',
      id: definition.id,
      name: definition.name,
      source: definition.datasource,
      providerKey: definition.provider,
      legend_exp: '',
      patch_size: '-1,-1',
      legend_split_behavior: '0',
    },
    [element('customproperties', {}, [element('Option')])],
  );
}
