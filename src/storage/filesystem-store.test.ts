import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { after, describe, it } from '../../test/support/node-test.js';
import { FilesystemStore } from './filesystem-store.js';

const ref = (name: string) => ({ name, schema: 'public' });
const folder = mkdtempSync(join(tmpdir(), 'steward-listing-'));
after(() => rmSync(folder, { recursive: true, force: true }));

describe('listing a projects folder', () => {
  it('follows projects created, removed, renamed and copied in, by this process or any other', async () => {
    const dir = join(folder, 'projects');
    const store = new FilesystemStore(dir);
    assert.deepEqual(await store.list(), []);
    await store.create(ref('b'), '<qgis/>');
    await store.create(ref('a'), '<qgis/>');
    assert.deepEqual(await store.list(), ['a', 'b']);
    assert.deepEqual(await store.list(), ['a', 'b']);

    // Another process: a folder made first and its project file written afterwards, as a copy does.
    mkdirSync(join(dir, 'c'));
    mkdirSync(join(dir, 'notes'));
    assert.deepEqual(await store.list(), ['a', 'b']);
    writeFileSync(join(dir, 'c', 'c.qgz'), 'zip');
    assert.deepEqual(await store.list(), ['a', 'b', 'c']);

    renameSync(join(dir, 'b'), join(dir, 'd'));
    renameSync(join(dir, 'd', 'b.qgs'), join(dir, 'd', 'd.qgs'));
    assert.deepEqual(await store.list(), ['a', 'c', 'd']);
    assert.equal(await store.remove(ref('a')), true);
    assert.deepEqual(await store.list(), ['c', 'd']);
    await new FilesystemStore(dir).remove(ref('c'));
    assert.deepEqual(await store.list(), ['d']);
  });
});
