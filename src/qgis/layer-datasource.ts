/**
 * A layer's datasource changed in place, as QGIS's `QgsMapLayer::setDataSource` ("Change Data
 * Source" in Desktop) changes it: the source, the provider, and what the provider reads of the new
 * data (its WKB type, its extent), everything else of the layer (styles, labels, forms, fields'
 * configuration) as it was. And the fields its styles, labels and filter read, which the new source
 * must have.
 */
import { type CrsDefinition, spatialRefSysElement } from './crs.js';
import { expressionFields } from './expression-fields.js';
import { splitFileDatasource } from './file-datasource.js';
import { type Extent, formatNumber } from './layer.js';
import { styleFieldsUsed } from './style-fields.js';
import { element, firstChild, indent, replaceChild, setText, textContent, type XmlElement } from './xml/node.js';

/** What the new source is, as the provider read it. */
export interface NewDatasource {
  datasource: string;
  provider: string;
  extent: Extent;
  wgs84Extent: Extent;
  /** Vector only: the new source's WKB type as QGIS names it. */
  wkbType?: string;
  /** Set when the new source's CRS is not the layer's: QGIS takes the provider's. */
  crs?: CrsDefinition;
}

/** The subset string (filter) of a datasource: OGR's `|subset=`, a database's `sql=`. */
export function datasourceFilter(datasource: string, provider: string): string {
  if (provider === 'ogr') {
    const option = splitFileDatasource(datasource).options.find((item) => item.startsWith('subset='));
    return option?.slice('subset='.length) ?? '';
  }
  return /\bsql=(.*)$/s.exec(datasource)?.[1] ?? '';
}

/** The fields the layer's styles, labels and filter read, sorted. */
export function fieldsUsed(mapLayer: XmlElement, datasource: string, provider: string): string[] {
  const filter = expressionFields(datasourceFilter(datasource, provider));
  return [...new Set([...filter, ...styleFieldsUsed(mapLayer)])].sort();
}

function setExtent(mapLayer: XmlElement, name: string, extent: Extent): void {
  const box = firstChild(mapLayer, name);
  if (!box) return;
  (['xmin', 'ymin', 'xmax', 'ymax'] as const).forEach((corner, index) => {
    const holder = firstChild(box, corner);
    const value = extent[index] as number;
    // The same bounds stay as QGIS wrote them.
    if (holder && Number(textContent(holder)) !== value) setText(holder, formatNumber(value));
  });
}

/** Writes the new source in the layer's element, as QGIS writes a layer whose source was changed. */
export function writeLayerDatasource(mapLayer: XmlElement, source: NewDatasource): void {
  const holder = firstChild(mapLayer, 'datasource');
  if (holder) setText(holder, source.datasource);
  const provider = firstChild(mapLayer, 'provider');
  if (provider) setText(provider, source.provider);
  if (source.wkbType !== undefined && mapLayer.attributes.has('wkbType'))
    mapLayer.attributes.set('wkbType', source.wkbType);
  setExtent(mapLayer, 'extent', source.extent);
  setExtent(mapLayer, 'wgs84extent', source.wgs84Extent);
  const srs = firstChild(mapLayer, 'srs');
  if (source.crs && srs) replaceChild(mapLayer, srs, indent(element('srs', {}, [spatialRefSysElement(source.crs)]), 3));
}
