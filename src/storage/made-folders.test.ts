import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { after, describe, it } from '../../test/support/node-test.js';
import { removeMadeFolders } from './made-folders.js';

describe('removeMadeFolders', () => {
  const root = mkdtempSync(join(tmpdir(), 'steward-made-folders-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('removes the folders the mkdir made, and none that were there', async () => {
    mkdirSync(join(root, 'there'));
    const deepest = join(root, 'there', 'new', 'deeper');
    await removeMadeFolders(deepest, await mkdir(deepest, { recursive: true }));
    assert.ok(!existsSync(join(root, 'there', 'new')));
    assert.ok(existsSync(join(root, 'there')));
  });

  it('keeps a made folder another request put a file in meanwhile, and those above it', async () => {
    const deepest = join(root, 'shared', 'deeper');
    const first = await mkdir(deepest, { recursive: true });
    writeFileSync(join(root, 'shared', 'other.gpkg'), 'x');
    await removeMadeFolders(deepest, first);
    assert.ok(!existsSync(deepest));
    assert.ok(existsSync(join(root, 'shared', 'other.gpkg')));
  });

  it('removes nothing when the mkdir made nothing', async () => {
    const there = join(root, 'kept');
    mkdirSync(there);
    await removeMadeFolders(there, await mkdir(there, { recursive: true }));
    assert.ok(existsSync(there));
  });
});
