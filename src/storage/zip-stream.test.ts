import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { strToU8, Zip, ZipDeflate, zipSync } from 'fflate';

import { after, describe, it } from '../../test/support/node-test.js';
import { BadRequest } from '../errors.js';
import { type EntryOutput, unzipStream } from './zip-stream.js';
import { streamedZip } from './zip-writer.js';

const LIMITS = { entries: 10, bytes: 4 * 1024 * 1024 };

/**
 * The bytes in chunks of `size`, as a body arrives, each lent in the same memory as a socket read
 * into one buffer lends them: overwritten with junk once the next is asked for, so that a chunk
 * kept past that unpacks wrong.
 */
async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Buffer> {
  const lent = Buffer.alloc(Math.min(size, bytes.length));
  for (let at = 0; at < bytes.length; at += size) {
    const piece = bytes.subarray(at, at + size);
    lent.set(piece);
    yield lent.subarray(0, piece.length);
    lent.fill(0xee);
  }
}

async function collected(stream: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** An archive fflate streams: each file deflated, its CRC-32 and sizes in a data descriptor after it. */
function describedZip(files: Record<string, Uint8Array>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Uint8Array[] = [];
    const zip = new Zip((error, data, final) => {
      if (error) reject(error);
      parts.push(data);
      if (final) resolve(Buffer.concat(parts));
    });
    for (const [name, content] of Object.entries(files)) {
      const entry = new ZipDeflate(name, { level: 1 });
      zip.add(entry);
      entry.push(content, true);
    }
    zip.end();
  });
}

describe('unzipStream', () => {
  const root = mkdtempSync(join(tmpdir(), 'steward-zip-stream-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  let folders = 0;

  /** Unpacks the archive in chunks of `size` into a new folder, `*.qgs` kept in memory; the folder and the kept. */
  async function unpack(bytes: Uint8Array, size: number, limits = LIMITS) {
    const folder = join(root, String(folders++));
    const place = async (name: string): Promise<EntryOutput> => {
      if (name.endsWith('.qgs')) return { to: 'memory' };
      if (name.endsWith('~')) return { to: 'nowhere' };
      return { to: 'file', path: join(folder, name.replaceAll('/', '_')) };
    };
    mkdirSync(folder);
    const kept = await unzipStream(chunked(bytes, size), limits, place);
    return { folder, kept };
  }

  async function refused(bytes: Uint8Array, reason: RegExp, limits = LIMITS): Promise<string> {
    const folder = join(root, String(folders));
    await assert.rejects(unpack(bytes, 4096, limits), (error: unknown) => {
      assert.ok(error instanceof BadRequest, String(error));
      assert.match(error.message, reason);
      return true;
    });
    return folder;
  }

  const big = randomBytes(1536 * 1024 + 17);
  const files = {
    'p.qgs': strToU8('<qgis/>'),
    'data/big.bin': big,
    'data/small.txt': strToU8('hello'),
    'p.qgs~': strToU8('old'),
  };

  it('unpacks stored and deflated files in any chunking, to files, memory or nowhere', async () => {
    for (const level of [0, 6] as const) {
      const small = zipSync({ 'p.qgs': strToU8('<qgis/>'), 'data/a.txt': strToU8('a'.repeat(100)) }, { level });
      for (let size = 1; size < 40; size += 3) {
        const { folder, kept } = await unpack(small, size);
        assert.equal(kept.get('p.qgs')?.toString(), '<qgis/>');
        assert.equal(readFileSync(join(folder, 'data_a.txt'), 'utf8'), 'a'.repeat(100), `chunks of ${size}`);
      }
      const bytes = zipSync(files, { level });
      for (const size of [1000, 65536, bytes.length]) {
        const { folder, kept } = await unpack(bytes, size);
        assert.deepEqual([...kept.keys()], ['p.qgs']);
        assert.equal(kept.get('p.qgs')?.toString(), '<qgis/>');
        assert.deepEqual(readdirSync(folder).sort(), ['data_big.bin', 'data_small.txt']);
        assert.ok(readFileSync(join(folder, 'data_big.bin')).equals(big), `level ${level}, chunks of ${size}`);
        assert.equal(readFileSync(join(folder, 'data_small.txt'), 'utf8'), 'hello');
      }
    }
  });

  it("unpacks entries whose sizes follow their data: Steward's own bundles and streamed deflate", async () => {
    const path = join(root, 'big.bin');
    writeFileSync(path, big);
    // A descriptor's signature in the data, not followed by its count of bytes, is data.
    const tricky = Buffer.concat([Buffer.from([0x50, 0x4b, 0x07, 0x08]), Buffer.alloc(12, 1), big.subarray(0, 1000)]);
    writeFileSync(join(root, 'tricky.bin'), tricky);
    writeFileSync(join(root, 'empty.bin'), '');
    const bundle = await streamedZip(
      ['p.qgs', strToU8('<qgis/>')],
      [
        { name: 'data/big.bin', path, size: big.length },
        { name: 'data/tricky.bin', path: join(root, 'tricky.bin'), size: tricky.length },
        { name: 'data/empty.bin', path: join(root, 'empty.bin'), size: 0 },
      ],
    );
    const bytes = await collected(bundle.stream);
    const small = await collected(
      (
        await streamedZip(
          ['p.qgs', strToU8('<qgis/>')],
          [{ name: 'data/tricky.bin', path: join(root, 'tricky.bin'), size: tricky.length }],
        )
      ).stream,
    );
    for (let size = 1; size < 40; size += 3) {
      const { folder } = await unpack(small, size);
      assert.ok(readFileSync(join(folder, 'data_tricky.bin')).equals(tricky), `chunks of ${size}`);
    }
    for (const size of [1000, 65536]) {
      const { folder } = await unpack(bytes, size);
      assert.ok(readFileSync(join(folder, 'data_big.bin')).equals(big));
      assert.ok(readFileSync(join(folder, 'data_tricky.bin')).equals(tricky));
      assert.equal(readFileSync(join(folder, 'data_empty.bin')).length, 0);
    }
    const deflated = await describedZip({ 'p.qgs': strToU8('<qgis/>'), 'data/big.bin': big });
    const { folder } = await unpack(deflated, 4096);
    assert.ok(readFileSync(join(folder, 'data_big.bin')).equals(big));
  });

  it('refuses unsafe names, bombs and too many entries before writing a byte of them', async () => {
    let folder = await refused(zipSync({ 'p.qgs': strToU8('x'), '../escape.bin': strToU8('x') }), /would leave/);
    assert.deepEqual(readdirSync(folder), []);
    folder = await refused(zipSync({ 'zeros.bin': new Uint8Array(LIMITS.bytes + 1) }), /more than 4194304 bytes/);
    assert.deepEqual(readdirSync(folder), []);
    const many = Object.fromEntries(Array.from({ length: 11 }, (_, index) => [`f${index}`, strToU8('x')]));
    await refused(zipSync(many), /more than 10 entries/);
    const described = await describedZip({ 'zeros.bin': new Uint8Array(LIMITS.bytes + 1) });
    await refused(described, /more than 4194304 bytes/);
  });

  it('refuses archives cut short, damaged, or whose directory lists other entries', async () => {
    const bytes = Buffer.from(zipSync(files, { level: 0 }));
    await refused(bytes.subarray(0, bytes.length - 100), /cut short|central directory/);
    await refused(bytes.subarray(0, 500_000), /cut short/);
    const flipped = Buffer.from(bytes);
    flipped[1_000_000] = (flipped[1_000_000] ?? 0) ^ 0xff;
    await refused(flipped, /CRC-32/);
    // The directory names another file than the local header it points at.
    const renamed = Buffer.from(bytes);
    const at = renamed.lastIndexOf('data/small.txt');
    renamed.write('data/smalL.txt', at);
    await refused(renamed, /does not list entry "data\/smalL.txt"/);
    await refused(bytes.subarray(0, 37), /cut short/);
    // p.qgs's header (30 bytes), name (5) and data (7), then no signature.
    await refused(Buffer.concat([bytes.subarray(0, 42), Buffer.from('junk')]), /entries are damaged/);
  });
});
