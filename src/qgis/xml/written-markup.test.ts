import assert from 'node:assert/strict';

import fc from 'fast-check';

import { describe, it } from '../../../test/support/node-test.js';
import { text, type XmlNode } from './node.js';
import { parseXml } from './parse.js';
import { serializeXml, serializeXmlUtf8 } from './serialize.js';
import { rewriteChildren, type WrittenChildren, WrittenMarkup } from './written-markup.js';

/** Text nodes are kept; a text starting with `!` stands for a node written afresh each time. */
const encode = (node: XmlNode): Buffer => Buffer.from(node.kind === 'text' ? node.value : '', 'utf8');
const isAfresh = (node: XmlNode): boolean => node.kind === 'text' && node.value.startsWith('!');

/** Writes `nodes` from `previous`; returns what was written, in order, and the nodes asked for their bytes. */
function write(previous: WrittenChildren | undefined, nodes: XmlNode[]) {
  const out: Buffer[] = [];
  const asked: XmlNode[] = [];
  const children = rewriteChildren(previous, nodes, {
    keptBytes: (node) => {
      asked.push(node);
      return isAfresh(node) ? undefined : encode(node);
    },
    afresh: (node) => out.push(encode(node)),
    emit: (bytes) => out.push(bytes),
  });
  return { children, written: Buffer.concat(out), asked };
}

/** Short text, text long enough to be a part of its own, and nodes written afresh. */
const nodeValue = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ minLength: 1500, maxLength: 3000 }),
  fc.string().map((value) => `!${value}`),
);

/** A list edit: nodes inserted at a place, or removed from one. */
const edit = fc.oneof(
  fc.record({ insert: fc.nat(), values: fc.array(nodeValue, { maxLength: 4 }) }),
  fc.record({ remove: fc.nat(), count: fc.integer({ min: 1, max: 4 }) }),
);

describe("a container's written children", () => {
  it('are rewritten from their last bytes to the bytes of the nodes, whatever was inserted and removed', () => {
    fc.assert(
      fc.property(fc.array(nodeValue), fc.array(edit, { maxLength: 40 }), (values, edits) => {
        let nodes: XmlNode[] = values.map((value) => text(value));
        let children = write(undefined, nodes).children;
        for (const change of edits) {
          nodes = [...nodes];
          if ('insert' in change)
            nodes.splice(change.insert % (nodes.length + 1), 0, ...change.values.map((v) => text(v)));
          else nodes.splice(change.remove % Math.max(1, nodes.length), change.count);
          const next = write(children, nodes);
          children = next.children;
          assert.deepEqual(next.written, Buffer.concat(nodes.map(encode)));
          let offset = 0;
          nodes.forEach((node, index) => {
            assert.equal(children.offsets[index], offset);
            if (!isAfresh(node)) offset += encode(node).byteLength;
          });
          assert.equal(children.offsets[nodes.length], offset);
          assert.deepEqual(Buffer.concat(children.bytes.parts).byteLength, offset);
        }
      }),
    );
  });

  it('ask only the nodes between those kept at the start and end for their bytes, and write the others afresh', () => {
    const nodes = Array.from({ length: 100 }, (_, index) => text(index === 70 ? '!afresh' : `<${index}>`));
    const first = write(undefined, nodes);
    const added = text('new');
    const next = write(first.children, [...nodes.slice(0, 40), added, ...nodes.slice(41)]);
    assert.deepEqual(next.asked, [added]);
    assert.equal(
      next.written.toString('utf8'),
      [...nodes.slice(0, 40), added, ...nodes.slice(41)]
        .map((node) => (node.kind === 'text' ? node.value : ''))
        .join(''),
    );
  });

  it('hand on large kept pieces as the buffers they are, not copies', () => {
    const large = Array.from({ length: 80 }, (_, index) => text(`${index}`.padEnd(2000, '.')));
    const first = write(undefined, large);
    const pieces: Buffer[] = [];
    rewriteChildren(first.children, [...large.slice(0, 10), text('x'), ...large.slice(10)], {
      keptBytes: encode,
      afresh: () => assert.fail('nothing is written afresh'),
      emit: (bytes) => pieces.push(bytes),
    });
    assert.ok(pieces.length <= 4, `${pieces.length} pieces`);
    assert.ok(pieces.some((piece) => first.children.bytes.parts.some((part) => part.buffer === piece.buffer)));
  });

  it('hand on small markup written anew in parts of at most about 16 KiB', () => {
    const nodes = Array.from({ length: 600 }, (_, index) => text(`<record id="${index}"/>`.padEnd(300, ' ')));
    const pieces: Buffer[] = [];
    rewriteChildren(undefined, nodes, {
      keptBytes: encode,
      afresh: () => assert.fail('nothing is written afresh'),
      emit: (bytes) => pieces.push(bytes),
    });
    assert.deepEqual(Buffer.concat(pieces), Buffer.concat(nodes.map(encode)));
    assert.ok(pieces.length > 1 && pieces.every((piece) => piece.byteLength < 16 * 1024 + 300));
  });
});

describe('records moved among the others', () => {
  /** Records as raw markup, each after the one indentation node they share, as a layer tree's layers are. */
  const markup = (node: XmlNode): Buffer =>
    Buffer.from(node.kind === 'raw' ? node.markup : node.kind === 'text' ? node.value : '', 'utf8');
  const indentation = text('\n    ');
  const indented = (records: readonly XmlNode[]): XmlNode[] => records.flatMap((record) => [indentation, record]);

  function rewrite(previous: WrittenChildren | undefined, nodes: XmlNode[], asked: XmlNode[], pieces: Buffer[]) {
    return rewriteChildren(previous, nodes, {
      keptBytes: (node) => {
        asked.push(node);
        return markup(node);
      },
      afresh: () => assert.fail('nothing is written afresh'),
      emit: (bytes) => pieces.push(bytes),
    });
  }

  it('are written from the last bytes whatever the moves, and are not asked for their bytes where they were moved', () => {
    const move = fc.record({ from: fc.nat(), to: fc.nat(), count: fc.integer({ min: 1, max: 5 }) });
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 120 }), fc.array(move, { minLength: 1, maxLength: 12 }), (size, moves) => {
        let records: XmlNode[] = Array.from({ length: size }, (_, index) => ({
          kind: 'raw',
          markup: `<layer-tree-layer id="l${index}"/>`.padEnd(index % 7 === 0 ? 1500 : 40, ' '),
        }));
        let children = rewrite(undefined, indented(records), [], []);
        for (const { from, to, count } of moves) {
          records = [...records];
          const moved = records.splice(from % records.length, count);
          records.splice(to % (records.length + 1), 0, ...moved);
          const asked: XmlNode[] = [];
          const pieces: Buffer[] = [];
          const nodes = indented(records);
          children = rewrite(children, nodes, asked, pieces);
          assert.deepEqual(Buffer.concat(pieces), Buffer.concat(nodes.map(markup)));
          assert.deepEqual(Buffer.concat(children.bytes.parts), Buffer.concat(nodes.map(markup)));
          // A moved record is found where it was written; fewer than 16 nodes between the kept
          // start and end (8 records) are written from their bytes, being few.
          const recordsAsked = asked.filter((node) => node.kind === 'raw').length;
          assert.ok(recordsAsked <= 8, `${recordsAsked} records asked`);
        }
      }),
    );
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
