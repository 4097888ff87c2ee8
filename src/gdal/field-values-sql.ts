/**
 * A field's values asked of the database a layer is read from, in its own SQL: PostgreSQL, a
 * GeoPackage or SQLite group, sort and limit them (from an index when there is one) where GDAL
 * would send every feature over. The answer is the full read's (src/gdal/field-values.ts): the
 * layer's filter applied, null left out, the same smallest values in the same order. Text is sorted
 * bytewise (`COLLATE "C"`, SQLite's `BINARY`): UTF-8 bytes sort as code points, which is
 * JavaScript's order of UTF-16 units but for characters past U+FFFF against those from U+E000.
 */
import type gdal from 'gdal-async';

import { type GdalSource } from './datasource.js';
import { compareValues, type FieldValues, NUMERIC_TYPES, valueOf } from './field-value.js';

/** The field asked of a layer: its name, its GDAL type, whether it is the key column. */
export interface AskedField {
  name: string;
  type: string;
  isKey: boolean;
}

/** How each driver's SQL compares text bytewise. */
const BYTEWISE: Record<string, string> = {
  PostgreSQL: 'COLLATE "C"',
  GPKG: 'COLLATE BINARY',
  SQLite: 'COLLATE BINARY',
};

/**
 * Types whose SQL order is the full read's: numbers, booleans (0 and 1), text, dates (ISO text
 * sorts as time does). Times and date-times (time zones), lists and binary are read whole.
 */
const SORTED_ALIKE = new Set([...NUMERIC_TYPES, 'boolean', 'string', 'date']);

const quoted = (identifier: string): string => `"${identifier.replace(/"/g, '""')}"`;

/**
 * The values from the database's SQL; undefined when the source is no database GDAL passes SQL to,
 * the field's type does not sort alike, or the SQL fails (a view without the column, a type
 * without equality): the layer is then read whole.
 */
export function databaseFieldValues(
  dataset: gdal.Dataset,
  layer: gdal.Layer,
  source: GdalSource,
  field: AskedField,
  limit: number,
): FieldValues | undefined {
  const bytewise = BYTEWISE[dataset.driver.description];
  // A filter of several statements is not put in SQL of Steward's making.
  if (bytewise === undefined || !SORTED_ALIKE.has(field.type) || source.filter?.includes(';')) return undefined;
  const column = quoted(field.name);
  const table = [source.table?.schema, source.table?.name ?? layer.name].flatMap((name) => name ?? []).map(quoted);
  // The filter ends on its own line: a `--` comment in it cannot swallow the closing parenthesis.
  const where = `${column} IS NOT NULL${source.filter === undefined ? '' : ` AND (${source.filter}\n)`}`;
  const from = `FROM ${table.join('.')} WHERE ${where}`;
  // Text grouped bytewise too: a case-blind collation of the column would merge values the full read tells apart.
  const selected = field.type === 'string' ? `${column} ${bytewise}` : column;
  try {
    const rows = resultRows(dataset, `SELECT ${selected} ${from} GROUP BY 1 ORDER BY 1 LIMIT ${limit + 1}`);
    const values = rows.flatMap(([value]) => valueOf(value) ?? []);
    const kept = values.slice(0, limit).sort(compareValues);
    const range = NUMERIC_TYPES.has(field.type) && kept.length > 0 ? minMax(dataset, column, from) : {};
    return { type: field.type, values: kept, truncated: values.length > limit, ...range };
  } catch {
    return undefined;
  }
}

function minMax(dataset: gdal.Dataset, column: string, from: string): { min?: number; max?: number } {
  const [[min, max] = []] = resultRows(dataset, `SELECT MIN(${column}), MAX(${column}) ${from}`);
  return typeof min === 'number' && typeof max === 'number' ? { min, max } : {};
}

/** The rows of a SELECT; a column GDAL takes for the result's key column is its feature id. */
function resultRows(dataset: gdal.Dataset, sql: string): unknown[][] {
  const result = dataset.executeSQL(sql);
  const rows: unknown[][] = [];
  for (let feature = result.features.first(); feature; feature = result.features.next())
    rows.push(result.fields.count() > 0 ? feature.fields.toArray() : [feature.fid]);
  return rows;
}
