/** Small builders for the XML QGIS writes in styles. */
import { element, type XmlElement } from '../xml/node.js';

/** An `<Option type="Map">` of strings, keys in QGIS's (sorted) order. */
export function optionMap(values: Record<string, string>): XmlElement {
  const entries = Object.keys(values)
    .sort()
    .map((name) => element('Option', { name, type: 'QString', value: values[name] ?? '' }));
  return element('Option', { type: 'Map' }, entries);
}

/** The empty data-defined property collection QGIS writes under `name`. */
export function emptyDataDefined(name: string): XmlElement {
  return element(name, {}, [
    element('Option', { type: 'Map' }, [
      element('Option', { name: 'name', type: 'QString', value: '' }),
      element('Option', { name: 'properties' }),
      element('Option', { name: 'type', type: 'QString', value: 'collection' }),
    ]),
  ]);
}

/** The string map of an `<Option type="Map">` (or, for older QML, of `<prop k v>` elements). */
export function readOptionMap(parent: XmlElement): Record<string, string> {
  const values: Record<string, string> = {};
  const map = parent.children.find(
    (node): node is XmlElement =>
      node.kind === 'element' && node.name === 'Option' && node.attributes.get('type') === 'Map',
  );
  for (const node of map?.children ?? []) {
    if (node.kind === 'element' && node.name === 'Option') {
      values[node.attributes.get('name') ?? ''] = node.attributes.get('value') ?? '';
    }
  }
  if (map) return values;
  for (const node of parent.children) {
    if (node.kind === 'element' && node.name === 'prop')
      values[node.attributes.get('k') ?? ''] = node.attributes.get('v') ?? '';
  }
  return values;
}
