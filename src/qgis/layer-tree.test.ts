import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { raster, WGS84 } from '../../test/support/sample-layers.js';
import { type LayerTreeRequest } from './layer-tree.js';
import { ProjectDocument } from './project.js';
import { childElements, firstChild, type XmlElement } from './xml/node.js';

/** The layer nodes of the document's layer tree, groups' included, in document order. */
function* treeNodes(
  document: ProjectDocument,
  group = firstChild(document.root, 'layer-tree-group'),
): Generator<XmlElement> {
  for (const child of group ? childElements(group) : []) {
    if (child.name === 'layer-tree-layer') yield child;
    else if (child.name === 'layer-tree-group') yield* treeNodes(document, child);
  }
}

function project(...names: string[]): ProjectDocument {
  const document = ProjectDocument.create({ title: 't', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });
  for (const name of names) document.addLayer(raster(name));
  return ProjectDocument.parse(document.serialize());
}

const GROUPED: LayerTreeRequest = {
  children: [
    {
      type: 'group',
      name: 'base',
      title: 'Base & <maps>',
      mutually_exclusive: true,
      children: [
        { type: 'layer', name: 'b', visible: false },
        { type: 'layer', name: 'c' },
        { type: 'layer', name: 'd' },
      ],
    },
    { type: 'layer', name: 'a', visible: false },
  ],
};

describe('the layer tree of a project', () => {
  it('is written back byte for byte when put as read, and read back as put', () => {
    const document = project('a', 'b', 'c', 'd');
    document.replaceLayerTree(GROUPED);
    const written = document.serialize();
    const read = ProjectDocument.parse(written);
    const tree = read.layerTreeOf();
    read.replaceLayerTree(tree);
    assert.equal(read.serialize(), written);
    assert.deepEqual(tree, {
      children: [
        {
          type: 'group',
          name: 'base',
          title: 'Base & <maps>',
          visible: true,
          expanded: true,
          mutually_exclusive: true,
          children: [
            { type: 'layer', name: 'b', visible: false },
            { type: 'layer', name: 'c', visible: true },
            { type: 'layer', name: 'd', visible: false },
          ],
        },
        { type: 'layer', name: 'a', visible: false },
      ],
    });
    assert.match(written, /mutually-exclusive="1" mutually-exclusive-child="1"/);
    assert.deepEqual(
      read.layers().map((layer) => layer.name),
      ['b', 'c', 'd', 'a'],
    );
  });

  it('sets the drawing order in both lists QGIS keeps, and removes a moved layer everywhere', () => {
    const document = project('a', 'b', 'c');
    document.replaceLayerTree({
      ...GROUPED,
      children: [
        { type: 'group', name: 'g', children: [{ type: 'layer', name: 'c' }] },
        { type: 'layer', name: 'a' },
        { type: 'layer', name: 'b' },
      ],
      order: ['b', 'c', 'a'],
    });
    assert.deepEqual(document.layerTreeOf().order, ['b', 'c', 'a']);
    const ids = document.layers().map((layer) => layer.id);
    const written = document.serialize();
    const items = [...written.matchAll(/<item>([^<]+)<\/item>/g)].map((match) => match[1]);
    const order = [...written.matchAll(/<layer id="([^"]+)"\/>/g)].map((match) => match[1]);
    const [c, a, b] = ids;
    assert.deepEqual(items, [b, c, a]);
    assert.deepEqual(order, [b, c, a]);
    assert.ok(document.removeLayer('c'));
    const after = document.serialize();
    assert.equal(after.split(c ?? '').length - 1, 0);
    assert.match(after, /<layer-tree-group checked="Qt::Checked" expanded="1" name="g">/);
  });

  it('writes a large tree moved into a group and back as a fresh read does, its layers their own nodes again', () => {
    const names = Array.from({ length: 80 }, (_, index) => `layer${index}`);
    const document = project(...names);
    const flat = document.layerTreeOf();
    const before = Buffer.concat(document.encode());
    const treeLayers = (): unknown[] => [...treeNodes(document)];
    const nodes = treeLayers();
    const grouped = {
      children: [
        { type: 'group' as const, name: 'half', children: flat.children.slice(0, 40) },
        ...flat.children.slice(40),
      ],
    };
    for (let round = 0; round < 2; round++) {
      document.replaceLayerTree(grouped);
      const written = Buffer.concat(document.encode());
      assert.equal(ProjectDocument.parse(written.toString('utf8')).serialize(), written.toString('utf8'));
      assert.match(written.toString('utf8'), /\n {6}<layer-tree-layer [^>]*name="layer0"/);
      // A write after the move, of a change elsewhere, writes the moved records as they stand.
      document.changeMetadata({ title: `round ${round}` });
      assert.equal(Buffer.concat(document.encode()).toString('utf8'), document.serialize());
      document.replaceLayerTree(flat);
      document.changeMetadata({ title: 't' });
      assert.deepEqual(Buffer.concat(document.encode()), before);
      assert.ok(treeLayers().every((node, index) => node === nodes[index]));
    }
  });

  it('removes a layer whose tree record took a new source after the records were read', () => {
    const document = project('a', 'b', 'c');
    assert.ok(document.removeLayer('a'));
    const b = document.layer('b')?.id ?? '';
    document.setTreeSources(new Map([[b, '/moved/b.tif']]));
    assert.match(document.serialize(), /source="\/moved\/b.tif"/);
    assert.ok(document.removeLayer('b'));
    assert.equal(document.serialize().split(b).length - 1, 0);
  });

  it('refuses a tree that misses, repeats or invents a layer, and leaves the document as it was', () => {
    const document = project('a', 'b');
    const before = document.serialize();
    const refused: Array<[LayerTreeRequest, RegExp]> = [
      [{ children: [{ type: 'layer', name: 'a' }] }, /layers "b" are missing/],
      [
        {
          children: [
            { type: 'layer', name: 'a' },
            { type: 'layer', name: 'b' },
            { type: 'layer', name: 'a' },
          ],
        },
        /"a" appear more than once/,
      ],
      [
        {
          children: [
            { type: 'layer', name: 'a' },
            { type: 'layer', name: 'b' },
            { type: 'layer', name: 'x' },
          ],
        },
        /no layer "x"/,
      ],
      [
        {
          children: [
            { type: 'layer', name: 'a' },
            { type: 'layer', name: 'b' },
          ],
          order: ['a'],
        },
        /"b" are missing/,
      ],
    ];
    for (const [request, message] of refused) {
      assert.throws(
        () => document.replaceLayerTree(request),
        (error: Error & { status?: number }) => {
          assert.equal(error.status, 422);
          assert.match(error.message, message);
          return true;
        },
      );
    }
    assert.equal(document.serialize(), before);
  });
});
