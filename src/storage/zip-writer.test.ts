import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';

import { unzipSync } from 'fflate';

import { after, describe, it } from '../../test/support/node-test.js';
import { unzipEntries } from './zip-entries.js';
import { streamedZip } from './zip-writer.js';

const folder = mkdtempSync(join(tmpdir(), 'steward-zip-writer-'));
const LIMITS = { entries: 10, bytes: 10_000_000 };

function file(name: string, bytes: Buffer): { name: string; path: string; size: number } {
  const path = join(folder, name.replace(/\//g, '_'));
  writeFileSync(path, bytes);
  return { name, path, size: bytes.length };
}

describe('streamedZip', () => {
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('streams the length it announces, which zip readers unpack byte for byte', async () => {
    const project = Buffer.from('<qgis>project</qgis>'.repeat(50));
    const data = [file('data/a/big.tif', randomBytes(3_000_000)), file('data/a/été.gpkg', randomBytes(1000))];
    const zip = await streamedZip(['town.qgs', project], data);
    const bytes = await buffer(zip.stream);
    assert.equal(bytes.length, zip.length);
    for (const files of [unzipEntries(bytes, LIMITS), new Map(Object.entries(unzipSync(bytes)))]) {
      assert.deepEqual([...files.keys()], ['town.qgs', 'data/a/big.tif', 'data/a/été.gpkg']);
      assert.ok(Buffer.from(files.get('town.qgs') ?? []).equals(project));
      assert.ok(Buffer.from(files.get('data/a/big.tif') ?? []).equals(readFileSync(data[0]?.path ?? '')));
    }
  });

  it('fails the stream when a file grew after it was listed', async () => {
    const grown = file('data/grown.bin', randomBytes(1000));
    const zip = await streamedZip(['p.qgs', Buffer.from('<qgis/>')], [grown]);
    appendFileSync(grown.path, randomBytes(10));
    await assert.rejects(buffer(zip.stream), /changed while it was sent/);
  });
});
