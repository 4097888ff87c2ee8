import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { LayerRecords } from './layer-records.js';
import { appendChild, element, firstChild, path } from './xml/node.js';
import { parseXml } from './xml/parse.js';
import { serializeXml } from './xml/serialize.js';

const project = (): ReturnType<typeof parseXml> =>
  parseXml(
    [
      '<qgis>',
      '  <layer-tree-group>',
      '    <layer-tree-layer id="a"/>',
      '    <layer-tree-group name="g">',
      '      <layer-tree-layer id="b"/>',
      '      <layer-tree-layer id="a"/>',
      '    </layer-tree-group>',
      '    <custom-order enabled="1">',
      '      <item>a</item>',
      '      <item>b</item>',
      '    </custom-order>',
      '  </layer-tree-group>',
      '  <layerorder>',
      '    <layer id="a"/>',
      '    <layer id="b"/>',
      '    <layer id="a"/>',
      '  </layerorder>',
      '  <snapping-settings>',
      '    <individual-layer-settings>',
      '      <layer-setting id="a" enabled="1"/>',
      '      <layer-setting id="b" enabled="1"/>',
      '    </individual-layer-settings>',
      '  </snapping-settings>',
      '</qgis>',
    ].join('\n'),
  );

function recordsOf(document: ReturnType<typeof parseXml>): LayerRecords {
  const tree = firstChild(document.root, 'layer-tree-group');
  assert.ok(tree);
  return new LayerRecords(
    () => tree,
    () => firstChild(tree, 'custom-order'),
    () => path(document.root, 'layerorder'),
    () => path(document.root, 'snapping-settings', 'individual-layer-settings'),
  );
}

const ids = (xml: string, tag: string): string[] =>
  [...xml.matchAll(new RegExp(`<${tag} id="([^"]*)"`, 'g'))].map((match) => match[1] ?? '');

describe("a project's layer records", () => {
  it('lose the first tree entry of a layer, in groups too, and every order and snapping entry', () => {
    const document = project();
    const records = recordsOf(document);
    records.remove('a');
    let xml = serializeXml(document);
    assert.deepEqual(ids(xml, 'layer-tree-layer'), ['b', 'a']);
    assert.deepEqual(ids(xml, 'layer'), ['b']);
    assert.deepEqual(ids(xml, 'layer-setting'), ['b']);
    assert.doesNotMatch(xml, /<item>a<\/item>/);
    records.remove('a');
    records.remove('b');
    xml = serializeXml(document);
    assert.deepEqual(ids(xml, 'layer-tree-layer'), []);
    assert.deepEqual(ids(xml, 'layer-setting'), []);
    assert.doesNotMatch(xml, /<item>/);
  });

  it('find the entries of a layer added after they were read', () => {
    const document = project();
    const records = recordsOf(document);
    records.remove('b');
    const tree = firstChild(document.root, 'layer-tree-group');
    const order = path(document.root, 'layerorder');
    const snapping = path(document.root, 'snapping-settings', 'individual-layer-settings');
    assert.ok(tree && order && snapping);
    const entry = element('layer-tree-layer', { id: 'c' });
    const orderEntry = element('layer', { id: 'c' });
    const setting = element('layer-setting', { id: 'c' });
    appendChild(tree, entry, 1);
    appendChild(order, orderEntry, 1);
    appendChild(snapping, setting, 2);
    records.added('c', {
      tree: { parent: tree, node: entry },
      order: { parent: order, node: orderEntry },
      snapping: { parent: snapping, node: setting },
    });
    assert.deepEqual(ids(serializeXml(document), 'layer'), ['a', 'a', 'c']);
    assert.deepEqual(ids(serializeXml(document), 'layer-setting'), ['a', 'c']);
    records.remove('c');
    const xml = serializeXml(document);
    assert.deepEqual(ids(xml, 'layer-tree-layer'), ['a', 'a']);
    assert.deepEqual(ids(xml, 'layer'), ['a', 'a']);
    assert.deepEqual(ids(xml, 'layer-setting'), ['a']);
  });
});
