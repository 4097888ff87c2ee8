import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { raster, WGS84 } from '../../test/support/sample-layers.js';
import { ProjectDocument } from './project.js';
import { firstChild } from './xml/node.js';

const mapLayers = (text: string): string[] => text.match(/<maplayer[\s\S]*?<\/maplayer>/g) ?? [];

describe('a project document written more than once', () => {
  it('writes the same text again, reads its layers and still changes them', () => {
    const document = ProjectDocument.create({ title: 't', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });
    document.addLayer(raster('first'));
    document.addLayer(raster('second'));
    const written = document.serialize();
    assert.equal(document.serialize(), written);
    assert.deepEqual(Buffer.concat(document.encode()), Buffer.from(written, 'utf8'));
    assert.equal(ProjectDocument.parse(written).serialize(), written);
    assert.deepEqual(
      document.layers().map((layer) => layer.name),
      ['first', 'second'],
    );
    assert.equal(document.layer('second')?.datasource, '/data/second.tif');

    document.mapLayerElement('second')?.attributes.set('stewardTest', '7');
    const [first, second] = mapLayers(Buffer.concat(document.encode()).toString('utf8'));
    assert.deepEqual(first, mapLayers(written)[0]);
    assert.equal(second?.replace(' stewardTest="7"', ''), mapLayers(written)[1]);
  });
});

describe("a project's layers after a write", () => {
  it('are text again, whether added, expanded to be changed, or expanded before a write that came first', () => {
    const document = ProjectDocument.create({ title: 't', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });
    const kinds = (): string[] =>
      (firstChild(document.root, 'projectlayers')?.children ?? [])
        .filter((node) => node.kind !== 'text')
        .map((node) => node.kind);
    document.addLayer(raster('first'));
    document.addLayer(raster('second'));
    assert.deepEqual(kinds(), ['element', 'element']);
    document.encode();
    assert.deepEqual(kinds(), ['deferred', 'deferred']);
    document.mapLayerElement('first')?.attributes.set('stewardTest', '1');
    document.addLayer(raster('third'));
    assert.deepEqual(kinds(), ['element', 'deferred', 'element']);
    const written = Buffer.concat(document.encode()).toString('utf8');
    assert.deepEqual(kinds(), ['deferred', 'deferred', 'deferred']);
    assert.match(written, /stewardTest="1"/);
    assert.equal(written, ProjectDocument.parse(written).serialize());
  });
});

describe("a project's custom layer order written more than once", () => {
  it('follows layers added and removed between writes', () => {
    const document = ProjectDocument.create({ title: 't', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });
    const orderOf = (bytes: Buffer[]): string[] =>
      [
        ...Buffer.concat(bytes)
          .toString('utf8')
          .matchAll(/<item>([^<]*)<\/item>/g),
      ].map((match) => match[1] ?? '');
    const idOf = (name: string): string => document.layer(name)?.id ?? '';
    document.addLayer(raster('a'));
    document.addLayer(raster('b'));
    assert.deepEqual(orderOf(document.encode()), [idOf('a'), idOf('b')]);
    document.addLayer(raster('c'));
    document.removeLayer('a');
    const written = document.encode();
    assert.deepEqual(orderOf(written), [idOf('b'), idOf('c')]);
    assert.equal(Buffer.concat(written).toString('utf8'), ProjectDocument.parse(document.serialize()).serialize());
  });
});

describe("a project document's layer list", () => {
  /** The layers as a fresh read of the document's text lists them. */
  const reread = (document: ProjectDocument): unknown => ProjectDocument.parse(document.serialize()).layers();
  const project = (): ProjectDocument =>
    ProjectDocument.create({ title: 't', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });

  it('follows additions, removals and a layer changed in place as a fresh read sees them', () => {
    const document = project();
    for (const name of ['a', 'b', 'c']) {
      document.addLayer(raster(name));
      assert.deepEqual(document.layers(), reread(document));
    }
    const manager = firstChild(document.mapLayerElement('b') ?? assert.fail('no layer b'), 'map-layer-style-manager');
    manager?.attributes.set('current', 'other');
    document.invalidate('b');
    assert.equal(document.layer('b')?.currentStyle, 'other');
    assert.deepEqual(document.layers(), reread(document));
    document.removeLayer('a');
    document.addLayer(raster('d'));
    assert.deepEqual(document.layers(), reread(document));
    assert.deepEqual(
      document.layers().map((layer) => layer.name),
      ['b', 'c', 'd'],
    );
  });

  it('lists every layer for a version as a fresh read does, listed before and after each change', () => {
    const document = project();
    const byName = (layers: readonly unknown[] | undefined): unknown =>
      [...(layers ?? assert.fail('no list of every layer'))].sort((a, b) =>
        (a as { name: string }).name.localeCompare((b as { name: string }).name),
      );
    const same = (): void => assert.deepEqual(byName(document.everyLayer()), byName(reread(document) as unknown[]));
    for (const name of ['a', 'b', 'c']) document.addLayer(raster(name));
    document.layers();
    same();
    document.changeLayerProperties('b', { short_name: 'bee' });
    assert.equal(document.everyLayer()?.find((layer) => layer.name === 'b')?.shortName, 'bee');
    same();
    document.removeLayer('a');
    same();
    document.addLayer(raster('d'));
    same();
    assert.equal(document.everyLayer(), document.everyLayer());
  });

  it('lists a layer the tree misses last, and uncovers a layer of the same name when the first goes', () => {
    const document = project();
    document.addLayer(raster('a'));
    document.addLayer({ ...raster('a'), id: 'second_a' });
    document.addLayer(raster('b'));
    const text = document.serialize().replace(/<layer-tree-layer [^>]*id="b_id"[\s\S]*?<\/layer-tree-layer>/, '');
    const edited = ProjectDocument.parse(text);
    assert.deepEqual(
      edited.layers().map((layer) => layer.id),
      ['a_id', 'b_id'],
    );
    edited.addLayer(raster('c'));
    assert.deepEqual(
      edited.layers().map((layer) => layer.id),
      ['a_id', 'c_id', 'b_id'],
    );
    edited.removeLayer('a');
    assert.deepEqual(
      edited.layers().map((layer) => layer.id),
      ['second_a', 'c_id', 'b_id'],
    );
    assert.deepEqual(edited.layers(), reread(edited));
  });
});

describe('a large project written after each change', () => {
  it('writes what a fresh read of its text writes, layers added, removed and restyled between writes', () => {
    const document = ProjectDocument.create({ title: 't', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });
    for (let index = 0; index < 150; index++) document.addLayer(raster(`layer${index}`));
    const check = (): void => {
      const encoded = Buffer.concat(document.encode());
      assert.deepEqual(encoded, Buffer.from(document.serialize(), 'utf8'));
      assert.equal(ProjectDocument.parse(encoded.toString('utf8')).serialize(), encoded.toString('utf8'));
    };
    check();
    for (let step = 0; step < 6; step++) {
      document.removeLayer(`layer${step * 20 + 5}`);
      document.addLayer(raster(`added${step}`));
      document.mapLayerElement(`layer${step * 20 + 9}`)?.attributes.set('stewardStep', String(step));
      check();
    }
    assert.equal(document.layers().length, 150);
    assert.equal(document.layer('layer5'), undefined);
    assert.match(Buffer.concat(document.encode()).toString('utf8'), /stewardStep="5"/);
  });
});
