/**
 * Project properties (the `<properties>` of a `.qgs`) as `QgsProject::writeEntry` writes them: one
 * element per key, nested by the key's path, with the value's type (`QString`, `int`, `double`,
 * `bool`, `QStringList` of `<value>`s). QGIS keeps the keys of a level in a map, so it writes them
 * sorted; what Steward adds goes in the same place.
 */
import { type Layout, lineBreak } from './xml/layout.js';
import {
  appendChild,
  childElements,
  element,
  firstChild,
  indent,
  removeChild,
  replaceChild,
  textContent,
  textElement,
  type XmlElement,
} from './xml/node.js';

/** A value as QGIS types it; an array is a `QStringList`. */
export type PropertyValue = string | number | boolean | readonly string[];

/** `<properties>` stands under the root: its keys are at depth 2. */
const KEY_DEPTH = 1;

/** The element of the key `path`, when the project has it. */
export function property(root: XmlElement, path: readonly string[]): XmlElement | undefined {
  let current = firstChild(root, 'properties');
  for (const name of path) current = current && firstChild(current, name);
  return current;
}

export function propertyText(root: XmlElement, path: readonly string[]): string {
  return textContent(property(root, path));
}

/** A flag as Qt reads one: any text but empty, `0` and `false`. */
export function propertyFlag(root: XmlElement, path: readonly string[], fallback = false): boolean {
  const found = property(root, path);
  if (!found) return fallback;
  const text = textContent(found).trim();
  return text !== '' && text !== '0' && text.toLowerCase() !== 'false';
}

/** A number, or undefined when the project has none (or not a number). */
export function propertyNumber(root: XmlElement, path: readonly string[]): number | undefined {
  const found = property(root, path);
  const text = found ? textContent(found).trim() : '';
  return text === '' || !Number.isFinite(Number(text)) ? undefined : Number(text);
}

/** A `QStringList`'s values (a lone string is a list of one, as Qt converts it). */
export function propertyList(root: XmlElement, path: readonly string[]): string[] {
  const found = property(root, path);
  if (!found) return [];
  const values = childElements(found, 'value');
  if (values.length > 0 || found.attributes.get('type') === 'QStringList')
    return values.map((value) => textContent(value));
  const text = textContent(found);
  return text === '' ? [] : [text];
}

function typeOf(value: PropertyValue): string {
  if (typeof value === 'string') return 'QString';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'double';
  return 'QStringList';
}

function valueElement(name: string, value: PropertyValue): XmlElement {
  const type = typeOf(value);
  if (typeof value !== 'object') return textElement(name, String(value), { type });
  return element(
    name,
    { type },
    value.map((item) => textElement('value', item)),
  );
}

/** Inserts `child` among `parent`'s children (at `depth`) before the first whose name sorts after its. */
function insertSorted(parent: XmlElement, child: XmlElement, depth: number, layout: Layout): void {
  const next = parent.children.find((node) => node.kind !== 'text' && 'name' in node && node.name > child.name);
  if (!next) return appendChild(parent, child, depth, layout);
  const index = parent.children.indexOf(next);
  parent.children.splice(index, 0, child, { kind: 'text', value: lineBreak(layout, depth + 1) });
}

/** Finds or creates (in sorted place) `<name>` under `parent`. */
function group(parent: XmlElement, name: string, depth: number, layout: Layout): XmlElement {
  const existing = firstChild(parent, name);
  if (existing) return existing;
  const created = element(name);
  insertSorted(parent, created, depth, layout);
  return created;
}

/** Writes the key `path` as `QgsProject::writeEntry` does with `value`. */
export function writeProperty(root: XmlElement, path: readonly string[], value: PropertyValue, layout: Layout): void {
  let parent = group(root, 'properties', 0, layout);
  let depth = KEY_DEPTH;
  for (const name of path.slice(0, -1)) {
    parent = group(parent, name, depth, layout);
    depth += 1;
  }
  const name = path[path.length - 1] as string;
  const written = indent(valueElement(name, value), depth + 1, layout);
  const existing = firstChild(parent, name);
  if (existing) replaceChild(parent, existing, written);
  else insertSorted(parent, written, depth, layout);
}

/**
 * Removes the key `path`, as `QgsProject::removeEntry` does: a key left with none inside stays,
 * written empty as QGIS writes it (`<WMTSGrids/>`).
 */
export function removeProperty(root: XmlElement, path: readonly string[]): void {
  const parent = path.length === 1 ? firstChild(root, 'properties') : property(root, path.slice(0, -1));
  const found = parent && firstChild(parent, path[path.length - 1] as string);
  if (!parent || !found) return;
  removeChild(parent, found);
  if (path.length > 1 && childElements(parent).length === 0) parent.children = [];
}
