/**
 * The fields a style reads, as QGIS would ask them of the layer drawing it: a renderer's attribute,
 * a rule's filter, a label's field or expression, a data-defined property's field or expression.
 * Read from a layer's `<maplayer>` (its current style and those of its style manager) or from a
 * QML's `<qgis>`, which hold the same elements.
 */
import { expressionFields } from './expression-fields.js';
import { fieldsOf } from './layer-references.js';
import { childElements, firstChild, type XmlElement } from './xml/node.js';

/** The parts of a layer or a QML that draw or label it: the current style and the others. */
const STYLE_PARTS = ['renderer-v2', 'labeling', 'map-layer-style-manager'];

function walk(node: XmlElement, visit: (element: XmlElement) => void): void {
  visit(node);
  for (const child of childElements(node)) walk(child, visit);
}

/** The fields one element reads: a renderer's attribute, a rule's filter, a label's field, a data-defined property's. */
function readsFields(node: XmlElement, known: ReadonlySet<string>, add: (fields: Iterable<string>) => void): void {
  const expression = (value: string | undefined): void => {
    if (value === undefined || value === '') return;
    add(known.has(value) ? [value] : expressionFields(value));
  };
  expression(node.attributes.get('attr'));
  expression(node.attributes.get('filter'));
  if (node.name === 'text-style') {
    const field = node.attributes.get('fieldName') ?? '';
    if (node.attributes.get('isExpression') === '1') expression(field);
    else if (field !== '') add([field]);
  }
  if (node.name === 'Option') {
    const name = node.attributes.get('name');
    const value = node.attributes.get('value');
    if (name === 'field' && value) add([value]);
    if (name === 'expression') expression(value);
  }
}

/**
 * The fields the styles of `root` read, sorted. An attribute naming a field `root` lists
 * (`<fieldConfiguration>`) is that field, whatever characters its name has; any other is read as
 * an expression.
 */
export function styleFieldsUsed(root: XmlElement): string[] {
  const known = new Set(fieldsOf(root));
  const used = new Set<string>();
  const add = (fields: Iterable<string>): void => {
    for (const field of fields) used.add(field);
  };
  for (const part of STYLE_PARTS) {
    const found = firstChild(root, part);
    if (found) walk(found, (node) => readsFields(node, known, add));
  }
  return [...used].sort();
}
