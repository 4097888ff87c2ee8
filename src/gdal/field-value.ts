/**
 * One value of a vector layer's field as the values route gives it, and their order: what GDAL
 * reads of a feature, and what it reads of a database's SQL result (src/gdal/field-values-sql.ts),
 * become the same values sorted the same way.
 */

export type FieldValue = string | number;

export interface FieldValues {
  /**
   * GDAL's type of the field (`integer`, `real`, `string`, `date`...); `integer` for the key
   * column, `boolean` for an integer of GDAL's Boolean subtype (its values 0 and 1), as the fields route says.
   */
  type: string;
  /** Its smallest distinct values other than null, sorted, at most the limit asked. */
  values: FieldValue[];
  /** Whether the field holds more distinct values than those given. */
  truncated: boolean;
  /** The smallest and largest value of a numeric field; undefined for others or without values. */
  min?: number;
  max?: number;
}

export const NUMERIC_TYPES = new Set(['integer', 'integer64', 'real']);

/** GDAL's date and time fields as ISO 8601 text (`2024-05-01`, `2024-05-01T08:30:00`). */
function dateText(value: Record<string, number>): string {
  const two = (n: number | undefined): string => String(n ?? 0).padStart(2, '0');
  const date = value['year'] === undefined ? '' : `${value['year']}-${two(value['month'])}-${two(value['day'])}`;
  const time =
    value['hour'] === undefined ? '' : `${two(value['hour'])}:${two(value['minute'])}:${two(value['second'])}`;
  return [date, time].filter(Boolean).join('T');
}

/** A value as GDAL gives it (a number, text, a date's parts, a list); undefined for null. */
export function valueOf(raw: unknown): FieldValue | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw === 'number' || typeof raw === 'string') return raw;
  if (typeof raw === 'object' && !Array.isArray(raw)) return dateText(raw as Record<string, number>);
  return JSON.stringify(raw);
}

/** Numbers by value, text by UTF-16 code units (JavaScript's `<`), whatever a database's collation says. */
export function compareValues(a: FieldValue, b: FieldValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}
