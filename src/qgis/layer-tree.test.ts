import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { raster, WGS84 } from '../../test/support/sample-layers.js';
import { type LayerTreeRequest, type TreeRequestNode } from './layer-tree.js';
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

/** Asserts that each request is refused with 422 and its message. */
function assertRefused(document: ProjectDocument, refused: Array<[LayerTreeRequest, RegExp]>): void {
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

  it('answers each replacement as a fresh read of the document does, and writes it as one', () => {
    const names = Array.from({ length: 70 }, (_, index) => `layer${index}`);
    const document = project(...names);
    const flat = document.layerTreeOf();
    const original = Buffer.concat(document.encode());
    const layer = (name: string, visible = true): TreeRequestNode => ({ type: 'layer', name, visible });
    const steps: LayerTreeRequest[] = [
      // The last layer moved on top, hidden.
      { children: [layer('layer69', false), ...names.slice(0, -1).map((name) => layer(name))] },
      // A group made of the first ten, a nested one in it, and an explicit drawing order.
      {
        children: [
          {
            type: 'group',
            name: 'g',
            short_name: 'g_wms',
            children: [
              ...names.slice(0, 5).map((name) => layer(name)),
              {
                type: 'group',
                name: 'inner',
                expanded: false,
                children: names.slice(5, 10).map((name) => layer(name)),
              },
            ],
          },
          ...names.slice(10).map((name) => layer(name)),
        ],
        order: [...names].reverse(),
      },
      // The group moved to the bottom, without an order of its own.
      {
        children: [
          ...names.slice(10).map((name) => layer(name)),
          {
            type: 'group',
            name: 'g',
            children: [
              ...names.slice(0, 5).map((name) => layer(name)),
              { type: 'group', name: 'inner', children: names.slice(5, 10).map((name) => layer(name)) },
            ],
          },
        ],
      },
    ];
    for (const step of steps) {
      const answer = document.replaceLayerTree(step);
      const written = Buffer.concat(document.encode()).toString('utf8');
      const read = ProjectDocument.parse(written);
      assert.deepEqual(answer, read.layerTreeOf());
      assert.equal(read.serialize(), written);
    }
    assert.deepEqual(document.layerTreeOf().children.at(-1), {
      type: 'group',
      name: 'g',
      short_name: 'g_wms',
      visible: true,
      expanded: true,
      mutually_exclusive: false,
      children: [
        ...names.slice(0, 5).map((name) => layer(name)),
        {
          type: 'group',
          name: 'inner',
          visible: true,
          expanded: false,
          mutually_exclusive: false,
          children: names.slice(5, 10).map((name) => layer(name)),
        },
      ],
    });
    // The custom order kept from the step that set it, turned off.
    const written = Buffer.concat(document.encode()).toString('utf8');
    assert.match(written, /<custom-order enabled="0">/);
    const items = [...written.matchAll(/<item>([^<]+)<\/item>/g)].map((match) => match[1]);
    assert.deepEqual(items, names.map((name) => document.layer(name)?.id).reverse());
    // Back to the tree as it was read, and its drawing order: the same bytes as before.
    document.replaceLayerTree({ ...flat, order: names });
    document.replaceLayerTree(flat);
    assert.deepEqual(Buffer.concat(document.encode()), original);
  });

  it('refuses a bad tree after replacements as before them, and takes the layers added since', () => {
    const document = project('a', 'b', 'c');
    const tree = (...names: string[]): LayerTreeRequest => ({
      children: names.map((name) => ({ type: 'layer', name })),
    });
    document.replaceLayerTree(tree('c', 'b', 'a'));
    const before = document.serialize();
    const refused: Array<[LayerTreeRequest, RegExp]> = [
      [tree('c', 'b'), /layers "a" are missing/],
      [tree('c', 'b', 'a', 'b'), /"b" appear more than once/],
      [tree('c', 'b', 'a', 'x'), /no layer "x"/],
      [
        { children: [{ type: 'group', name: 'e', embedded: true }, ...tree('a', 'b', 'c').children] },
        /no embedded group "e"/,
      ],
    ];
    assertRefused(document, refused);
    assert.equal(document.serialize(), before);
    document.replaceLayerTree(tree('a', 'c', 'b'));
    document.addLayer(raster('d'));
    assert.throws(() => document.replaceLayerTree(tree('a', 'c', 'b')), /layers "d" are missing/);
    const answer = document.replaceLayerTree(tree('d', 'a', 'c', 'b'));
    assert.deepEqual(answer, ProjectDocument.parse(document.serialize()).layerTreeOf());
    assert.deepEqual(
      document.layers().map((entry) => entry.name),
      ['d', 'a', 'c', 'b'],
    );
    assert.ok(document.changeLayerProperties('a', { name: 'a2' }));
    assert.throws(() => document.replaceLayerTree(tree('d', 'a', 'c', 'b')), /no layer "a"/);
    document.replaceLayerTree(tree('a2', 'b', 'c', 'd'));
    assert.match(document.serialize(), /<layer-tree-layer [^>]*name="a2"/);
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
    assertRefused(document, refused);
    assert.equal(document.serialize(), before);
  });
});
