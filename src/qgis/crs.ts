import { childText, element, path, textElement, type XmlElement } from './xml/node.js';

/** Everything QGIS writes in a `<spatialrefsys>` block. */
export interface CrsDefinition {
  wkt: string;
  proj4: string;
  srsid: number;
  srid: number;
  authid: string;
  description: string;
  projectionAcronym: string;
  ellipsoidAcronym: string;
  geographic: boolean;
}

/** Renders a `<spatialrefsys>` block with the children QGIS writes, in its order. */
export function spatialRefSysElement(crs: CrsDefinition): XmlElement {
  return element('spatialrefsys', {}, [
    textElement('wkt', crs.wkt),
    textElement('proj4', crs.proj4),
    textElement('srsid', String(crs.srsid)),
    textElement('srid', String(crs.srid)),
    textElement('authid', crs.authid),
    textElement('description', crs.description),
    textElement('projectionacronym', crs.projectionAcronym),
    textElement('ellipsoidacronym', crs.ellipsoidAcronym),
    textElement('geographicflag', String(crs.geographic)),
  ]);
}

/** The authority id (`EPSG:4326`) of the `<spatialrefsys>` inside `container`, or '' if none. */
export function authidOf(container: XmlElement | undefined): string {
  if (!container) return '';
  const block = container.name === 'spatialrefsys' ? container : path(container, 'spatialrefsys');
  return block ? childText(block, 'authid') : '';
}

/** Parses `EPSG:4326`, `epsg:4326` or a bare code into `EPSG:4326`; undefined when it is neither. */
export function normaliseAuthid(value: string | number): string | undefined {
  const text = String(value).trim();
  const match = /^(?:([A-Za-z]+):)?(\d+)$/.exec(text);
  if (!match) return undefined;
  return `${(match[1] ?? 'EPSG').toUpperCase()}:${match[2]}`;
}
