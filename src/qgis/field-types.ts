/**
 * A layer's fields as the API lists them, whatever the provider: each with a type of a small
 * vocabulary beside the provider's own name for it; and the expression fields (virtual fields) a
 * layer or a QML defines, as QGIS saves them (`<expressionfields>`, QgsExpressionFieldBuffer).
 */
import { childElements, firstChild, type XmlElement } from './xml/node.js';

export const FIELD_TYPES = [
  'integer',
  'real',
  'string',
  'date',
  'time',
  'datetime',
  'boolean',
  'binary',
  'other',
] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

export interface LayerField {
  name: string;
  type: FieldType;
  /** The provider's own name of the type: GDAL's (`Integer64`, `String`), QGIS's for an expression field. */
  type_name: string;
  /** An expression field's expression, which QGIS computes for each feature. */
  expression?: string;
}

/** The types QGIS saves of an expression field: `QMetaType` ids (`QVariant` ones before 3.38, the same numbers). */
const QT_TYPES: ReadonlyMap<number, FieldType> = new Map([
  [1, 'boolean'],
  [2, 'integer'],
  [3, 'integer'],
  [4, 'integer'],
  [5, 'integer'],
  [6, 'real'],
  [10, 'string'],
  [12, 'binary'],
  [14, 'date'],
  [15, 'time'],
  [16, 'datetime'],
  [38, 'real'],
]);

/** The expression fields `root` defines: a `<maplayer>`, or a QML's `<qgis>` saved with its Fields category. */
export function layerExpressionFields(root: XmlElement): LayerField[] {
  const holder = firstChild(root, 'expressionfields');
  return (holder ? childElements(holder, 'field') : []).map((field) => {
    const type = QT_TYPES.get(Number(field.attributes.get('type'))) ?? 'other';
    return {
      name: field.attributes.get('name') ?? '',
      type,
      type_name: field.attributes.get('typeName') || type,
      expression: field.attributes.get('expression') ?? '',
    };
  });
}
