/**
 * The distinct values of a vector layer's field over every feature, and the smallest and largest
 * of a numeric field, as a style's classes need them. A PostgreSQL table, a GeoPackage or a SQLite
 * database is asked in its own SQL (src/gdal/field-values-sql.ts); any other source, or one whose
 * SQL fails, is read whole by GDAL, its subset string applied. The API runs it in a GDAL worker
 * process (`fieldValuesOffLoop`), off its event loop.
 */
import gdal from 'gdal-async';

import { NotFound, StewardError, Unprocessable } from '../errors.js';
import { type GdalSource } from './datasource.js';
import { isBooleanSubtype, writtenTypes } from './field-subtypes.js';
import { compareValues, type FieldValue, type FieldValues, NUMERIC_TYPES, valueOf } from './field-value.js';
import { type AskedField, databaseFieldValues } from './field-values-sql.js';
import { runGdalTask } from './gdal-child.js';

export type { FieldValue, FieldValues } from './field-value.js';

function layerOf(dataset: gdal.Dataset, source: GdalSource): gdal.Layer {
  const layer = dataset.layers.get(source.layerName ?? source.layerIndex ?? 0);
  if (source.filter !== undefined) layer.setAttributeFilter(source.filter);
  return layer;
}

/**
 * The field's values, asked of the database unless `askDatabase` is false: NotFound when the
 * layer has no field `field`, 422 `datasource_unreadable` with GDAL's reason when GDAL cannot read
 * it (a file no longer a dataset, a layer or filter it lacks, a read failing midway).
 */
export async function readFieldValues(
  source: GdalSource,
  field: string,
  limit: number,
  askDatabase = true,
): Promise<FieldValues> {
  try {
    const dataset = source.drivers ? gdal.open(source.gdalPath, 'r', source.drivers) : gdal.open(source.gdalPath);
    try {
      const layer = layerOf(dataset, source);
      const asked = await askedField(dataset, layer, field);
      return (
        (askDatabase ? databaseFieldValues(dataset, layer, source, asked, limit) : undefined) ??
        fullReadValues(layer, asked, limit)
      );
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

/** Whether `field` of `layer`, an integer, is of GDAL's Boolean subtype. */
async function isBoolean(dataset: gdal.Dataset, layer: gdal.Layer, field: string): Promise<boolean> {
  return isBooleanSubtype((await writtenTypes(dataset, layer))[layer.fields.indexOf(field)]);
}

/** The field asked, its type and whether it is the key column; NotFound when the layer lacks it. */
async function askedField(dataset: gdal.Dataset, layer: gdal.Layer, field: string): Promise<AskedField> {
  const isKey = layer.fidColumn !== '' && layer.fidColumn === field;
  if (!isKey && layer.fields.indexOf(field) < 0) {
    const names = [...(layer.fidColumn ? [layer.fidColumn] : []), ...layer.fields.getNames()];
    throw new NotFound(`the layer has no field "${field}" (its fields: ${names.join(', ') || 'none'})`, {
      code: 'field_not_found',
    });
  }
  const type = isKey ? 'integer' : layer.fields.get(field).type;
  return {
    name: field,
    isKey,
    type: type === 'integer' && (await isBoolean(dataset, layer, field)) ? 'boolean' : type,
  };
}

/** Every feature of the layer read through GDAL. */
function fullReadValues(layer: gdal.Layer, field: AskedField, limit: number): FieldValues {
  const smallest = new SmallestValues(limit);
  let min = Infinity;
  let max = -Infinity;
  for (let feature = layer.features.first(); feature; feature = layer.features.next()) {
    const value = valueOf(field.isKey ? feature.fid : feature.fields.get(field.name));
    if (value === undefined) continue;
    smallest.add(value);
    if (typeof value === 'number') [min, max] = [Math.min(min, value), Math.max(max, value)];
  }
  const { values, truncated } = smallest.result();
  return {
    type: field.type,
    values,
    truncated,
    ...(NUMERIC_TYPES.has(field.type) && values.length > 0 && { min, max }),
  };
}

/**
 * The `limit` smallest distinct values seen, as SQL's `ORDER BY ... LIMIT` keeps them, whatever
 * order the features come in. Values are gathered up to twice the limit, then cut to the limit:
 * a value above the largest kept then is one more than the limit, never kept.
 */
class SmallestValues {
  private kept = new Set<FieldValue>();
  private ceiling: FieldValue | undefined;
  private dropped = false;

  constructor(private readonly limit: number) {}

  add(value: FieldValue): void {
    if (this.kept.has(value)) return;
    if (this.ceiling !== undefined && compareValues(value, this.ceiling) > 0) {
      this.dropped = true;
      return;
    }
    this.kept.add(value);
    if (this.kept.size > 2 * this.limit) this.cut();
  }

  result(): { values: FieldValue[]; truncated: boolean } {
    this.cut();
    return { values: [...this.kept], truncated: this.dropped };
  }

  private cut(): void {
    const sorted = [...this.kept].sort(compareValues);
    if (sorted.length > this.limit) {
      this.dropped = true;
      sorted.length = this.limit;
      this.ceiling = sorted.at(-1);
    }
    this.kept = new Set(sorted);
  }
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
