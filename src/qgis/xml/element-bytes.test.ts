import assert from 'node:assert/strict';

import { describe, it } from '../../../test/support/node-test.js';
import { raster, WGS84 } from '../../../test/support/sample-layers.js';
import { ProjectDocument } from '../project.js';
import { elementBytes } from './element-bytes.js';
import { parseXml } from './parse.js';

const cut = (text: string): string[] | undefined =>
  elementBytes(Buffer.from(text, 'utf8'), 'projectlayers', 'maplayer')?.map((bytes) => bytes.toString('utf8'));

/** The `<maplayer>`s the parser keeps deferred, as text. */
function deferred(text: string): string[] {
  const layers = parseXml(text, { deferred: new Set(['maplayer']) }).root.children.find(
    (node) => node.kind === 'element' && node.name === 'projectlayers',
  );
  return layers?.kind === 'element'
    ? layers.children.flatMap((node) => (node.kind === 'deferred' ? [node.utf8.toString('utf8')] : []))
    : [];
}

describe('elements cut out of bytes', () => {
  it('cuts each layer as the parser defers it, quoted `>` and names that only start alike included', () => {
    const text = `<qgis><title>≤ "a" > b</title><projectlayers>
    <maplayer type="vector" note="a > b"><id>one</id><maplayers-like/><maplayerx>é</maplayerx></maplayer>
    <maplayer type='raster'><id>two</id></maplayer>
  </projectlayers><maplayer type="vector"><id>outside</id></maplayer></qgis>`;
    assert.deepEqual(cut(text), deferred(text));
    assert.equal(cut(text)?.length, 2);
    assert.deepEqual(cut('<qgis><projectlayers/></qgis>'), undefined);
    assert.deepEqual(cut('<qgis><projectlayers></projectlayers></qgis>'), []);
  });

  it('leaves to the parser comments, CDATA, instructions, nesting and unclosed layers', () => {
    for (const inside of [
      '<!-- <maplayer><id>x</id></maplayer> -->',
      '<maplayer><id><![CDATA[</maplayer>]]></id></maplayer>',
      '<?pi <maplayer>?>',
      '<maplayer><maplayer><id>x</id></maplayer></maplayer>',
      '<maplayer><id>x</id>',
      '<maplayer type="a>',
    ]) {
      assert.equal(cut(`<qgis><projectlayers>${inside}</projectlayers></qgis>`), undefined, inside);
    }
  });

  it("reads a project's layers as the parsed project lists them", () => {
    const document = ProjectDocument.create({ title: 't', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });
    for (const name of ['first', 'second', 'third']) document.addLayer(raster(name));
    const content = Buffer.concat(document.encode());
    const parsed = ProjectDocument.parse(content.toString('utf8')).layers();
    assert.deepEqual(ProjectDocument.layersOf(content), parsed);
    assert.deepEqual(
      ProjectDocument.layersOf(
        Buffer.from(content.toString('utf8').replace('<projectlayers>', '<projectlayers><!-- -->')),
      ),
      parsed,
    );
  });
});
