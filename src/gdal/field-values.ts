/**
 * The distinct values of a vector layer's field over every feature, and the smallest and largest
 * of a numeric field, read by GDAL from the layer's source (its subset string applied), as a
 * style's classes need them. It reads the whole layer: the API runs it in a GDAL worker process
 * (`fieldValuesOffLoop`), off its event loop.
 */
import gdal from 'gdal-async';

import { NotFound, StewardError, Unprocessable } from '../errors.js';
import { type GdalSource } from './datasource.js';
import { writtenTypes } from './field-subtypes.js';
import { runGdalTask } from './gdal-child.js';

export type FieldValue = string | number;

export interface FieldValues {
  /**
   * GDAL's type of the field (`integer`, `real`, `string`, `date`...); `integer` for the key
   * column, `boolean` for an integer of GDAL's Boolean subtype (its values 0 and 1), as the fields route says.
   */
  type: string;
  /** Its distinct values other than null, sorted, at most the limit asked. */
  values: FieldValue[];
  /** Whether the field holds more distinct values than those given. */
  truncated: boolean;
  /** The smallest and largest value of a numeric field; undefined for others or without values. */
  min?: number;
  max?: number;
}

const NUMERIC = new Set(['integer', 'integer64', 'real']);

function layerOf(dataset: gdal.Dataset, source: GdalSource): gdal.Layer {
  const layer = dataset.layers.get(source.layerName ?? source.layerIndex ?? 0);
  if (source.filter !== undefined) layer.setAttributeFilter(source.filter);
  return layer;
}

/** GDAL's date and time fields as ISO 8601 text (`2024-05-01`, `2024-05-01T08:30:00`). */
function dateText(value: Record<string, number>): string {
  const two = (n: number | undefined): string => String(n ?? 0).padStart(2, '0');
  const date = value['year'] === undefined ? '' : `${value['year']}-${two(value['month'])}-${two(value['day'])}`;
  const time =
    value['hour'] === undefined ? '' : `${two(value['hour'])}:${two(value['minute'])}:${two(value['second'])}`;
  return [date, time].filter(Boolean).join('T');
}

function valueOf(raw: unknown): FieldValue | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw === 'number' || typeof raw === 'string') return raw;
  if (typeof raw === 'object' && !Array.isArray(raw)) return dateText(raw as Record<string, number>);
  return JSON.stringify(raw);
}

function compare(a: FieldValue, b: FieldValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/**
 * Reads every feature of the source's layer: NotFound when it has no field `field`, 422
 * `datasource_unreadable` with GDAL's reason when GDAL cannot read it (a file no longer a dataset,
 * a layer or filter it lacks, a read failing midway).
 */
export async function readFieldValues(source: GdalSource, field: string, limit: number): Promise<FieldValues> {
  try {
    const dataset = source.drivers ? gdal.open(source.gdalPath, 'r', source.drivers) : gdal.open(source.gdalPath);
    try {
      const layer = layerOf(dataset, source);
      const values = valuesOf(layer, field, limit);
      return values.type === 'integer' && (await isBoolean(dataset, layer, field))
        ? { type: 'boolean', values: values.values, truncated: values.truncated }
        : values;
    } finally {
      dataset.close();
    }
  } catch (error) {
    if (error instanceof StewardError) throw error;
    throw new Unprocessable(`GDAL cannot read the layer's source: ${(error as Error).message}`, {
      code: 'datasource_unreadable',
    });
  }
}

/** Whether `field` of `layer` is an integer of GDAL's Boolean subtype (the key column is not). */
async function isBoolean(dataset: gdal.Dataset, layer: gdal.Layer, field: string): Promise<boolean> {
  const index = layer.fields.indexOf(field);
  if (index < 0) return false;
  const written = await writtenTypes(dataset, layer);
  return written?.length === layer.fields.count() && written[index]?.subtype === 'Boolean';
}

function valuesOf(layer: gdal.Layer, field: string, limit: number): FieldValues {
  const isKey = layer.fidColumn !== '' && layer.fidColumn === field;
  if (!isKey && layer.fields.indexOf(field) < 0) {
    const names = [...(layer.fidColumn ? [layer.fidColumn] : []), ...layer.fields.getNames()];
    throw new NotFound(`the layer has no field "${field}" (its fields: ${names.join(', ') || 'none'})`, {
      code: 'field_not_found',
    });
  }
  const type = isKey ? 'integer' : layer.fields.get(field).type;
  const numeric = NUMERIC.has(type);
  const distinct = new Set<FieldValue>();
  let truncated = false;
  let min = Infinity;
  let max = -Infinity;
  for (let feature = layer.features.first(); feature; feature = layer.features.next()) {
    const value = valueOf(isKey ? feature.fid : feature.fields.get(field));
    if (value === undefined) continue;
    if (distinct.size < limit) distinct.add(value);
    else if (!distinct.has(value)) truncated = true;
    if (typeof value === 'number') [min, max] = [Math.min(min, value), Math.max(max, value)];
    if (truncated && !numeric) break;
  }
  const values = [...distinct].sort(compare);
  return { type, values, truncated, ...(numeric && values.length > 0 && { min, max }) };
}

/** `readFieldValues` in a GDAL worker process, at the API's priority: a client waits for it; killed once `signal` aborts. */
export async function fieldValuesOffLoop(
  source: GdalSource,
  field: string,
  limit: number,
  signal?: AbortSignal,
): Promise<FieldValues> {
  return (await runGdalTask(
    { kind: 'field-values', source, field, limit },
    { priority: 'interactive', ...(signal && { signal }) },
  )) as FieldValues;
}
