import assert from 'node:assert/strict';

import { strToU8, zipSync } from 'fflate';

import { describe, it } from '../../test/support/node-test.js';
import { BadRequest, Conflict } from '../errors.js';
import { unzipEntries } from './zip-entries.js';

const LIMITS = { entries: 10, bytes: 1000 };
const zip = (files: Record<string, Uint8Array>): Buffer => Buffer.from(zipSync(files));

function refused(bytes: Buffer, reason: RegExp, limits = LIMITS): void {
  assert.throws(
    () => unzipEntries(bytes, limits),
    (error: unknown) => error instanceof BadRequest && reason.test(error.message),
  );
}

describe('unzipEntries', () => {
  it('unpacks stored and deflated files, leaving folders out', () => {
    const files = unzipEntries(
      zip({ 'a/b.txt': strToU8('hello'), 'c.bin': new Uint8Array(500), 'a/': new Uint8Array(0) }),
      LIMITS,
    );
    assert.deepEqual([...files.keys()].sort(), ['a/b.txt', 'c.bin']);
    assert.equal(files.get('a/b.txt')?.toString(), 'hello');
    assert.equal(files.get('c.bin')?.length, 500);
  });

  it('refuses names that leave the folder', () => {
    for (const name of ['../x', 'a/../../x', '/etc/x', 'a\\..\\x', 'C:x', 'a//b', './x', 'a\u0000b']) {
      refused(zip({ [name]: strToU8('x') }), /would leave/);
    }
  });

  it('refuses archives beyond the limits before unpacking', () => {
    refused(zip({ big: new Uint8Array(1001) }), /unpack to 1001 bytes, more than 1000/);
    const many = Object.fromEntries(Array.from({ length: 11 }, (_, index) => [`f${index}`, strToU8('x')]));
    refused(zip(many), /11 entries, more than 10/);
  });

  it('stops an entry at the size it declares', () => {
    const bytes = zip({ liar: new Uint8Array(100_000) });
    const entry = bytes.lastIndexOf(Buffer.from('liar')) - 46;
    bytes.writeUInt32LE(10, entry + 24);
    refused(bytes, /does not unpack to the 10 bytes it declares/);
  });

  it('refuses an entry that unpacks to fewer bytes, or to other bytes, than it declares', () => {
    const stored = zip({ short: new Uint8Array(100) });
    const entry = stored.lastIndexOf(Buffer.from('short')) - 46;
    stored.writeUInt32LE(200, entry + 24);
    refused(stored, /does not unpack to the 200 bytes it declares/);
    // A stored entry (level 0) whose bytes were changed after its CRC-32 was written.
    const altered = Buffer.from(zipSync({ 'data.bin': [new Uint8Array(64).fill(7), { level: 0 }] }));
    const at = altered.indexOf(Buffer.from('data.bin')) + 'data.bin'.length + 3;
    altered.writeUInt8(altered.readUInt8(at) ^ 0xff, at);
    refused(altered, /does not unpack to the bytes it declares \(CRC-32\)/);
  });

  it("answers with the caller's error", () => {
    assert.throws(
      () => unzipEntries(zip({ '../x': strToU8('x') }), LIMITS, (reason) => new Conflict(`no: ${reason}`)),
      (error: unknown) => error instanceof Conflict && /^no: entry "\.\.\/x" would leave/.test(error.message),
    );
  });

  it('refuses what is not a whole zip', () => {
    refused(Buffer.from('not a zip at all, but long enough to be searched'), /no end of central directory/);
    refused(Buffer.alloc(3), /no end of central directory/);
    const whole = zip({ 'a.txt': strToU8('hello') });
    refused(whole.subarray(20), /cut short|damaged|local header/);
  });
});
