import assert from 'node:assert/strict';

import fc from 'fast-check';

import { describe, it } from '../../test/support/node-test.js';
import { applyDelta, ContentRuns, DeltaBase, type DeltaOp, encodeOps } from './content-delta.js';

const newBytes = (ops: readonly DeltaOp[]) =>
  ops.reduce((sum, op) => sum + (op.kind === 'bytes' ? op.bytes.byteLength : 0), 0);

/** An edit of a list of pieces: what a project write does to its layers and records. */
type Edit =
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'remove'; at: number }
  | { kind: 'change'; at: number; byte: number; value: number }
  | { kind: 'copy'; at: number }
  | { kind: 'cut'; at: number; point: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 300 }),
      fc.uint8Array({ minLength: 1024, maxLength: 4000 }),
    ),
  }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('change' as const), at: fc.nat(), byte: fc.nat(), value: fc.nat(255) }),
  fc.record({ kind: fc.constant('copy' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), point: fc.nat() }),
);

function applyEdit(pieces: Uint8Array[], change: Edit): void {
  if (change.kind === 'insert') {
    pieces.splice(change.at % (pieces.length + 1), 0, change.bytes);
    return;
  }
  if (pieces.length === 0) return;
  const at = change.at % pieces.length;
  const piece = pieces[at] as Uint8Array;
  if (change.kind === 'remove') pieces.splice(at, 1);
  // A piece written anew with the same bytes is found by its content rather than its identity.
  else if (change.kind === 'copy') pieces[at] = Uint8Array.from(piece);
  // A piece cut in two, as a later version made from an earlier one's buffers cuts them.
  else if (change.kind === 'cut') {
    const point = change.point % (piece.byteLength + 1);
    pieces.splice(at, 1, piece.subarray(0, point), piece.subarray(point));
  } else if (piece.byteLength > 0) {
    const changed = Uint8Array.from(piece);
    changed[change.byte % changed.byteLength] = change.value;
    pieces[at] = changed;
  }
}

describe('a delta against a base version', () => {
  it('makes the new content exactly, whatever pieces were inserted, removed, changed or copied', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 400 }), { maxLength: 30 }),
        fc.array(edit, { maxLength: 12 }),
        (basePieces, edits) => {
          const pieces = [...basePieces];
          for (const change of edits) applyEdit(pieces, change);
          const ops = new DeltaBase(basePieces).delta(pieces);
          assert.deepEqual(applyDelta(Buffer.concat(basePieces), ops), Buffer.concat(pieces));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('holds only the new bytes when a layer is added to a thousand, and records change in one piece', () => {
    const records = (ids: string[], tag: string) => ids.map((id) => `    <${tag} id="${id}"/>\n`).join('');
    const ids = Array.from({ length: 1000 }, (_, index) => `layer${index}`);
    const layers = ids.map((id) => Buffer.from(`<maplayer id="${id}">${'x'.repeat(4000)}</maplayer>\n`));
    const header = (tree: string[], order: string[]) =>
      Buffer.from(
        `<qgis>\n  <tree>\n${records(tree, 'layer')}  </tree>\n  <order>\n${records(order, 'item')}  </order>\n`,
      );
    const base = new DeltaBase([header(ids, ids), ...layers, Buffer.from('</qgis>\n')]);
    const added = Buffer.from(`<maplayer id="new">${'y'.repeat(4000)}</maplayer>\n`);
    const order = ids.filter((id) => id !== 'layer500');
    const ops = base.delta([header([...ids, 'new'], order), ...layers.slice(1), added, Buffer.from('</qgis>\n')]);
    const expected = '    <layer id="new"/>\n'.length + added.byteLength;
    assert.ok(newBytes(ops) <= expected + 64, `${newBytes(ops)} new bytes, ${expected} changed`);
  });

  it('finds each of several pieces changed one after another in the base piece it was', () => {
    const container = (tag: string, ids: string[]) =>
      Buffer.from(ids.map((id) => `\n      <${tag} id="${id}" enabled="1" tolerance="12"/>`).join(''));
    const ids = Array.from({ length: 500 }, (_, index) => `layer${index}`);
    const tags = ['tree', 'order', 'setting', 'item', 'theme', 'other'];
    const between = (index: number) => Buffer.from(`</container${index}>\n  <container${index + 1}>`);
    const version = (kept: string[]) => tags.flatMap((tag, index) => [container(tag, kept), between(index)]);
    const base = new DeltaBase(version(ids));
    const ops = base.delta(version(ids.filter((id) => id !== 'layer250')));
    assert.equal(newBytes(ops), 0);
  });

  it('copies pieces cut from the memory of base pieces, keeping only what is new', () => {
    const layers = Buffer.from(Array.from({ length: 100 }, (_, index) => `<maplayer id="l${index}"/>\n`).join(''));
    const base = new DeltaBase([Buffer.from('<qgis>\n'), layers, Buffer.from('</qgis>\n')]);
    const added = Buffer.from('<maplayer id="new"/>\n');
    const ops = base.delta([
      Buffer.from('<qgis>\n'),
      layers.subarray(0, 300),
      added,
      layers.subarray(330),
      Buffer.from('</qgis>\n'),
    ]);
    assert.deepEqual(ops, [
      { kind: 'copy', offset: 0, length: 7 + 300 },
      { kind: 'bytes', bytes: added },
      { kind: 'copy', offset: 7 + 330, length: layers.byteLength - 330 + 8 },
    ]);
  });

  it('copies a piece cut across the memory of several base pieces, the few bytes beside them new', () => {
    const memory = Buffer.from(Array.from({ length: 200 }, (_, index) => `<layer id="l${index}"/>\n`).join(''));
    const indent = Buffer.from('\n    ');
    const base = new DeltaBase([Buffer.from('<tree>'), indent, memory.subarray(10, 2000), memory.subarray(2000)]);
    // A run of the records cut from the memory again, 5 bytes before the base's pieces hold it.
    const ops = base.delta([Buffer.from('<tree>'), memory.subarray(5, 3000), Buffer.from('</tree>')]);
    assert.deepEqual(ops, [
      { kind: 'copy', offset: 0, length: 6 },
      { kind: 'bytes', bytes: memory.subarray(5, 10) },
      { kind: 'copy', offset: 6 + 5, length: 2990 },
      { kind: 'bytes', bytes: Buffer.from('</tree>') },
    ]);
    const content = Buffer.concat([Buffer.from('<tree>'), memory.subarray(5, 3000), Buffer.from('</tree>')]);
    assert.deepEqual(applyDelta(Buffer.concat([Buffer.from('<tree>'), indent, memory.subarray(10)]), ops), content);
  });

  it('finds a content made afresh in one piece across the base pieces: only what changed is new', () => {
    const layer = (id: string, source = id) =>
      Buffer.from(
        `<maplayer id="${id}">\n  <datasource>/data/${source}.gpkg|layername=${source}</datasource>\n</maplayer>\n`,
      );
    const ids = Array.from({ length: 1000 }, (_, index) => `l${index}`);
    const [head, tail] = [Buffer.from('<qgis>\n<projectlayers>\n'), Buffer.from('</projectlayers>\n</qgis>\n')];
    const base = new DeltaBase([head, ...ids.map((id) => layer(id)), tail]);
    const changed = layer('l120', 'moved');
    const added = layer('new');
    const restored = Buffer.concat([
      head,
      ...ids.filter((id) => id !== 'l50').map((id) => (id === 'l120' ? changed : layer(id))),
      added,
      tail,
    ]);
    const ops = base.delta([restored]);
    const old = Buffer.concat([head, ...ids.map((id) => layer(id)), tail]);
    assert.deepEqual(applyDelta(old, ops), restored);
    assert.ok(newBytes(ops) <= changed.byteLength + added.byteLength, `${newBytes(ops)} new bytes`);
  });

  it('makes the same content applied in pieces, delta after delta, and through its encoding', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 400 }), { maxLength: 20 }),
        fc.array(fc.array(edit, { maxLength: 6 }), { minLength: 1, maxLength: 6 }),
        (first, rounds) => {
          let pieces = [...first];
          const applied = new ContentRuns(Buffer.concat(first));
          for (const edits of rounds) {
            const next = [...pieces];
            for (const change of edits) applyEdit(next, change);
            const ops = new DeltaBase(pieces).delta(next);
            // The same content made afresh in one piece (a version restored).
            const whole = new DeltaBase(pieces).delta([Buffer.concat(next)]);
            assert.deepEqual(applyDelta(Buffer.concat(pieces), whole), Buffer.concat(next));
            const encoded = Buffer.concat(encodeOps(ops));
            applied.apply(encoded, 0, ops.length);
            assert.deepEqual(applied.join(), Buffer.concat(next));
            pieces = next;
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('finds a whole file of like records with some inserted, removed, changed and moved: little else is new', () => {
    /** A record as a project has its layers: the same lines but for a name, and a shared block. */
    const record = (name: string, color = '0,0,0') =>
      [
        `    <maplayer type="vector">`,
        `      <id>${name}_0000</id>`,
        `      <datasource>/data/${name}.gpkg</datasource>`,
        ...Array.from({ length: 12 }, (_, line) => `      <prop k="shared${line}" v="${'s'.repeat(60)}"/>`),
        `      <prop k="color" v="${color}"/>`,
        `    </maplayer>`,
        '',
      ].join('\n');
    const recordEdit = fc.oneof(
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('change' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('move' as const), at: fc.nat(), to: fc.nat() }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 80, max: 200 }),
        fc.array(recordEdit, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        (count, edits, onePiece) => {
          const records = Array.from({ length: count }, (_, index) => record(`layer${index}`));
          const base = [Buffer.from('<qgis>\n  <projectlayers>\n'), ...records.map((text) => Buffer.from(text))];
          const next = [...records];
          for (const [step, change] of edits.entries()) {
            const at = change.at % next.length;
            if (change.kind === 'insert') next.splice(at, 0, record(`added${step}`));
            else if (change.kind === 'remove') next.splice(at, 1);
            else if (change.kind === 'change') next[at] = record(`changed${step}`, '255,0,0');
            else next.splice(change.to % next.length, 0, ...next.splice(at, 1));
          }
          const whole = Buffer.concat([base[0] as Buffer, ...next.map((text) => Buffer.from(text))]);
          const ops = new DeltaBase(onePiece ? [Buffer.concat(base)] : base).delta([whole]);
          assert.deepEqual(applyDelta(Buffer.concat(base), ops), whole);
          // Records after one moved far may be matched with like ones, their own lines new; never the rest of the file.
          assert.ok(newBytes(ops) < whole.byteLength / 4, `${newBytes(ops)} new of ${whole.byteLength}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a delta that copies beyond its base', () => {
    assert.throws(
      () =>
        new ContentRuns(Buffer.from('abc')).apply(
          Buffer.concat(encodeOps([{ kind: 'copy', offset: 2, length: 2 }])),
          0,
          1,
        ),
      /does not have/,
    );
    assert.throws(() => applyDelta(Buffer.from('abc'), [{ kind: 'copy', offset: 2, length: 2 }]), /does not have/);
  });
});
