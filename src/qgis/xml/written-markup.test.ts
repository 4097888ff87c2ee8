import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import { text, type XmlNode } from './node.js';
import { parseXml } from './parse.js';
import { serializeXml, serializeXmlUtf8 } from './serialize.js';
import { rewriteRun, WrittenMarkup } from './written-markup.js';

const encode = (node: XmlNode): Buffer => Buffer.from(node.kind === 'text' ? node.value : '', 'utf8');

/** A list edit: nodes inserted at a place, or removed from one. */
const edit = fc.oneof(
  fc.record({ insert: fc.nat(), values: fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 4 }) }),
  fc.record({ remove: fc.nat(), count: fc.integer({ min: 1, max: 4 }) }),
);

describe('a run of written children', () => {
  it('is rewritten from its last bytes to the bytes of its nodes, whatever was inserted and removed', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' })), fc.array(edit, { maxLength: 12 }), (values, edits) => {
        let nodes: XmlNode[] = values.map((value) => text(value));
        let run = rewriteRun(undefined, nodes, encode);
        for (const change of edits) {
          nodes = [...nodes];
          if ('insert' in change)
            nodes.splice(change.insert % (nodes.length + 1), 0, ...change.values.map((v) => text(v)));
          else nodes.splice(change.remove % Math.max(1, nodes.length), change.count);
          run = rewriteRun(run, nodes, encode);
          const pieces = nodes.map(encode);
          assert.deepEqual(run.bytes, Buffer.concat(pieces));
          let offset = 0;
          pieces.forEach((piece, index) => {
            assert.equal(run.offsets[index], offset);
            offset += piece.byteLength;
          });
          assert.equal(run.offsets[nodes.length], offset);
        }
      }),
    );
  });

  it('is the same run when no node changed, and encodes only the nodes between those kept', () => {
    const nodes = Array.from({ length: 100 }, (_, index) => text(`<${index}>`));
    const first = rewriteRun(undefined, nodes, encode);
    assert.equal(rewriteRun(first, [...nodes], encode), first);
    const encoded: XmlNode[] = [];
    const counting = (node: XmlNode): Buffer => {
      encoded.push(node);
      return encode(node);
    };
    const added = text('new');
    rewriteRun(first, [...nodes.slice(0, 40), added, ...nodes.slice(41)], counting);
    assert.deepEqual(encoded, [added]);
  });
});

describe('a large container written again', () => {
  it('writes what the text of the document says after records are added and removed', () => {
    const records = Array.from({ length: 200 }, (_, index) => `<layer id="l${index}"/>`);
    const document = parseXml(`<qgis>\n  <layerorder>\n    ${records.join('\n    ')}\n  </layerorder>\n</qgis>`);
    const order = document.root.children.find((node) => node.kind === 'element');
    assert.ok(order?.kind === 'element');
    const written = new WrittenMarkup();
    const remember = (): void => {
      for (const node of order.children) {
        if (node.kind === 'element' && written.markupOf(node) === undefined)
          written.remember(node, Buffer.from(serializeXml({ prolog: [], root: node }).trimEnd(), 'utf8'));
      }
    };
    for (const step of [0, 1, 2, 3]) {
      remember();
      assert.equal(Buffer.concat(serializeXmlUtf8(document, written)).toString('utf8'), serializeXml(document));
      const extra = parseXml(`<layer id="extra${step}"/>`).root;
      order.children.splice(7 * step + 3, 2, text('\n    '), extra);
      order.children.splice(100 + step, 2);
    }
  });
});
