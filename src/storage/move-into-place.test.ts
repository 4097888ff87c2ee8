import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

import { describe, it } from '../../test/support/node-test.js';
import { holdOpen, scratchFolder } from '../../test/support/scratch.js';
import { hiddenSibling } from './atomic-file.js';
import { moveIntoPlace } from './move-into-place.js';

const folder = scratchFolder('steward-move-');

function freshFolder(name: string): string {
  const dir = join(folder, name);
  mkdirSync(dir);
  return dir;
}

describe('moving a file into place', () => {
  it('moves a file to a free path', async () => {
    const dir = freshFolder('free');
    writeFileSync(join(dir, 'work'), 'new');
    await moveIntoPlace(join(dir, 'work'), join(dir, 'out.tif'));
    assert.deepEqual(readdirSync(dir), ['out.tif']);
    assert.equal(readFileSync(join(dir, 'out.tif'), 'utf8'), 'new');
  });

  it('replaces a file, leaving no other name behind, while a reader of the old one still reads it whole', async () => {
    const dir = freshFolder('replace');
    const [work, out] = [join(dir, 'work'), join(dir, 'out.tif')];
    writeFileSync(out, 'old content');
    writeFileSync(work, 'new content');
    const readOld = holdOpen(out);
    await moveIntoPlace(work, out);
    assert.deepEqual(readdirSync(dir), ['out.tif']);
    assert.equal(readFileSync(out, 'utf8'), 'new content');
    assert.equal(readOld(11), 'old content');
  });

  it('puts the old file back when the new one cannot be moved', async () => {
    const dir = freshFolder('failed');
    const out = join(dir, 'out.tif');
    writeFileSync(out, 'old content');
    await assert.rejects(moveIntoPlace(join(dir, 'missing'), out), { code: 'ENOENT' });
    assert.deepEqual(readdirSync(dir), ['out.tif']);
    assert.equal(readFileSync(out, 'utf8'), 'old content');
  });

  it('names hidden siblings validly whatever the length of the name', () => {
    const long = join(folder, `${'é'.repeat(123)}.tif`);
    const sibling = basename(hiddenSibling(long, '.replaced'));
    assert.ok(sibling.startsWith(`.${'é'.repeat(40)}.`), sibling);
    assert.match(sibling, /\.[0-9a-f-]{36}\.replaced$/);
    assert.ok(Buffer.byteLength(sibling) <= 255);
    assert.notEqual(hiddenSibling(long, '.tmp'), hiddenSibling(long, '.tmp'));
  });
});
