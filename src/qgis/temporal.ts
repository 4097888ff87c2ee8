import { childText, element, firstChild, textElement, type XmlElement } from './xml/node.js';

/** A WMS time dimension: the instants or ISO 8601 intervals (`start/end/period`) it offers. */
export interface TimeDimension {
  values: string[];
  default?: string;
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?$/;
/** How QGIS writes the ends of a temporal range: UTC, to the second. */
const QGIS_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
/** `mode` of `QgsRasterLayerTemporalProperties::ModeFixedTemporalRange`. */
const FIXED_TEMPORAL_RANGE = '0';

function toSeconds(milliseconds: number): string {
  return Number.isNaN(milliseconds) ? '' : new Date(milliseconds).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * An ISO 8601 date-time `YYYY-MM-DDTHH:MM:SS`, with `Z` or an offset `±HH:MM` or without a zone
 * (read as UTC, the zone of WMS times), as the UTC instant QGIS writes: `YYYY-MM-DDTHH:MM:SSZ`.
 * Undefined when the text is not of that form or names no real date-time (February 30, 24:00).
 */
export function utcInstant(text: string): string | undefined {
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const wallClock = `${text.slice(0, 19)}Z`;
  // Date rolls out-of-range fields over (February 30 becomes March 1): a real date-time reads back the same.
  if (toSeconds(Date.parse(wallClock)) !== wallClock) return undefined;
  const instant = toSeconds(Date.parse(match[1] === undefined ? wallClock : text));
  return QGIS_INSTANT.test(instant) ? instant : undefined;
}

/**
 * The `<temporal>` element of a raster layer whose temporal properties are active with the fixed
 * range [instant, instant], as QGIS 3.22 writes it (`instant` as `utcInstant` returns it).
 */
export function fixedInstantElement(instant: string): XmlElement {
  return element('temporal', { fetchMode: '0', enabled: '1', mode: FIXED_TEMPORAL_RANGE }, [
    element('fixedRange', {}, [textElement('start', instant), textElement('end', instant)]),
  ]);
}

/**
 * The time dimension of a layer whose active temporal properties are a fixed range of one
 * instant. Other temporal settings (ranges, times from the data provider) give none.
 */
export function readTimeDimension(layer: XmlElement): TimeDimension | undefined {
  const temporal = firstChild(layer, 'temporal');
  if (temporal?.attributes.get('enabled') !== '1' || temporal.attributes.get('mode') !== FIXED_TEMPORAL_RANGE)
    return undefined;
  const start = utcInstant(childText(temporal, 'fixedRange', 'start'));
  if (start === undefined || start !== utcInstant(childText(temporal, 'fixedRange', 'end'))) return undefined;
  return instantDimension(start);
}

/** The time dimension of a layer fixed at one instant: that instant, offered and drawn by default. */
export function instantDimension(instant: string): TimeDimension {
  return { values: [instant], default: instant };
}
