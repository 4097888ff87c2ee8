/**
 * GDAL's subtypes of a vector layer's fields (`Boolean`, `Int16`, `Float32`), which `ogrinfo`
 * writes after the type (`Integer(Boolean)`). gdal-async's FieldDefn does not read them, so the
 * layer's definition is copied, without a feature, to a CSV in memory: GDAL's CSV writer then
 * writes its `.csvt`, one `Type(Subtype)` per field in the layer's order (`JSON` and `UUID`
 * strings are written as `String` there, so they are not told apart).
 */
import { randomUUID } from 'node:crypto';

import gdal from 'gdal-async';

/** A field's type as the `.csvt` names it: OGR's type name, and its subtype when it has one. */
export interface WrittenType {
  type: string;
  subtype: string | undefined;
}

/** `Integer(Boolean)` is a subtype; `String(20)` and `Real(10.2)` are widths. */
function writtenType(text: string): WrittenType {
  const [, type = text, subtype] = /^(\w+)(?:\(([A-Za-z]\w*)\))?/.exec(text.trim()) ?? [];
  return { type, subtype };
}

/**
 * The type GDAL writes of each field of `layer` (of `dataset`), in its order; empty when GDAL does
 * not copy the layer's definition to CSV, or writes a type list that does not line up with the fields.
 */
export async function writtenTypes(dataset: gdal.Dataset, layer: gdal.Layer): Promise<WrittenType[]> {
  const written = await csvTypes(dataset, layer);
  return written?.length === layer.fields.count() ? written : [];
}

/** Whether a field GDAL writes so is an integer of its Boolean subtype. */
export function isBooleanSubtype(written: WrittenType | undefined): boolean {
  return written?.subtype === 'Boolean';
}

async function csvTypes(dataset: gdal.Dataset, layer: gdal.Layer): Promise<WrittenType[] | undefined> {
  const path = `/vsimem/steward-fields-${randomUUID()}.csv`;
  const args = ['-f', 'CSV', '-lco', 'CREATE_CSVT=YES', '-limit', '0', layer.name];
  try {
    (await gdal.vectorTranslateAsync(path, dataset, args)).close();
    return gdal.vsimem.release(`${path}t`).toString('utf8').split(',').map(writtenType);
  } catch {
    return undefined;
  } finally {
    release(path);
    release(`${path}t`);
  }
}

/** Frees a file of GDAL's memory, when it is there. */
function release(path: string): void {
  try {
    gdal.vsimem.release(path);
  } catch {
    // Never written, or read and freed already.
  }
}
