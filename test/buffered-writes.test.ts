/**
 * Uploads on a file system that refuses direct writes (a ramfs mounted for the test, where opening
 * a file O_DIRECT fails with EINVAL): the received files are written through the page cache
 * instead, whole and byte for byte, whatever the pieces they arrive in.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { constants, readFileSync } from 'node:fs';
import { mkdir, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { zipSync } from 'fflate';

import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { FileOutput } from '../src/storage/file-output.js';
import { unzipStream } from '../src/storage/zip-stream.js';
import { writeRandomGeoTiff } from './support/large-upload.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Mounted, mountRamfs } from './support/tmpfs.js';

const MIB = 1024 * 1024;

/** `bytes` in pieces of `size`, as a socket hands a body over. */
async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

describe('uploads where direct writes are refused', () => {
  let disk: Mounted;

  before(async () => {
    disk = await mountRamfs();
  });
  after(async () => {
    await disk.unmount();
  });

  test('the file system refuses them, as the tests below need', async () => {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT;
    await assert.rejects(open(join(disk.dir, 'direct'), flags), { code: 'EINVAL' });
  });

  test('a file of uneven pieces past several batches and a flush is written whole', async () => {
    // 70 MiB: past a 64 MiB flush and many 4 MiB batches; its size and pieces not multiples of a block.
    const bytes = randomBytes(70 * MIB + 4097);
    const path = join(disk.dir, 'pieces.bin');
    const file = await FileOutput.create(path);
    for await (const piece of pieces(bytes, 65_536 + 7)) await file.write(piece);
    await file.finish();
    assert.ok(readFileSync(path).equals(bytes));
  });

  test("a bundle's stored files are unpacked whole", async () => {
    const data = randomBytes(9 * MIB + 1);
    const archive = zipSync({ 'p.qgs': Buffer.from('<qgis/>'), 'data/a.bin': data }, { level: 0 });
    const folder = join(disk.dir, 'bundle');
    await mkdir(folder);
    const kept = await unzipStream(pieces(Buffer.from(archive), 65_536), { entries: 10, bytes: 64 * MIB }, (name) =>
      Promise.resolve(name.endsWith('.qgs') ? { to: 'memory' } : { to: 'file', path: join(folder, 'a.bin') }),
    );
    assert.equal(kept.get('p.qgs')?.toString(), '<qgis/>');
    assert.ok(readFileSync(join(folder, 'a.bin')).equals(data));
  });

  test('PUT /api/data/{path} stores the file there, byte for byte', async () => {
    const uploads = join(disk.dir, 'uploads');
    await mkdir(uploads);
    const tiff = writeRandomGeoTiff(join(disk.dir, 'source.tif'), 5 * MIB + 123);
    const api: RunningServer = await startServer(
      loadConfig({
        STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/',
        STEWARD_QGISSERVER_VERSION: '3.22',
        STEWARD_LOGLEVEL: 'ERROR',
        STEWARD_LISTEN: '127.0.0.1:0',
        STEWARD_QGISSERVER_PROJECTS_DIR: join(disk.dir, 'projects'),
        STEWARD_DATA_ROOTS: uploads,
        STEWARD_UPLOAD_ROOT: uploads,
      }),
    );
    try {
      const reply = await fetch(`${api.url}/api/data/rasters/dem.tif`, { method: 'PUT', body: readFileSync(tiff) });
      assert.equal(reply.status, 201, await reply.text());
      assert.ok(readFileSync(join(uploads, 'rasters', 'dem.tif')).equals(readFileSync(tiff)));
      assert.deepEqual(await readdir(join(uploads, 'rasters')), ['dem.tif'], 'no hidden file left');
    } finally {
      await api.close();
    }
  });
});
