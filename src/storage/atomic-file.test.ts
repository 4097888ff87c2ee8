import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';

import { describe, it } from '../../test/support/node-test.js';
import { holdOpen, scratchFolder } from '../../test/support/scratch.js';
import { stageFile, writeFileAtomic } from './atomic-file.js';

const folder = scratchFolder('steward-atomic-');

describe('an atomic write', () => {
  it('writes more pieces than one system call takes, in order, and the modification time given', async () => {
    const pieces = Array.from({ length: 3000 }, (_, index) => Buffer.from(`${index},`));
    pieces.splice(5, 0, Buffer.alloc(0));
    const path = join(folder, 'pieces.txt');
    await writeFileAtomic(path, pieces, { modified: 1_700_000_000.000123 });
    assert.equal(readFileSync(path, 'utf8'), Array.from({ length: 3000 }, (_, index) => `${index},`).join(''));
    const modified = statSync(path, { bigint: true }).mtimeNs;
    assert.ok(modified > 1_700_000_000_000_122_000n && modified < 1_700_000_000_000_124_000n, String(modified));
  });

  it('replaces a file whose release it leaves for later, and then removes the old one', async () => {
    const dir = join(folder, 'release');
    mkdirSync(dir);
    const path = join(dir, 'project.qgs');
    await writeFileAtomic(path, 'first');
    const readOld = holdOpen(path);
    await writeFileAtomic(path, 'second', { releaseLater: true });
    assert.equal(readFileSync(path, 'utf8'), 'second');
    assert.equal(readOld(5), 'first', 'a reader of the old file still reads it whole');
    while (readdirSync(dir).length > 1) await nextTurn();
    assert.deepEqual(readdirSync(dir), ['project.qgs']);
  });

  it('stages the new content beside the file, which it replaces only when committed', async () => {
    const dir = join(folder, 'staged');
    mkdirSync(dir);
    const path = join(dir, 'project.qgs');
    await writeFileAtomic(path, 'first');
    const discarded = await stageFile(path, [Buffer.from('sec'), Buffer.from('ond')], { flush: false });
    assert.equal(readFileSync(path, 'utf8'), 'first');
    await discarded.discard();
    assert.deepEqual(readdirSync(dir), ['project.qgs']);
    const staged = await stageFile(path, 'third', { modified: 1_700_000_000 });
    assert.equal(readFileSync(path, 'utf8'), 'first');
    await staged.commit();
    assert.equal(readFileSync(path, 'utf8'), 'third');
    assert.equal(statSync(path).mtimeMs, 1_700_000_000_000);
    assert.deepEqual(readdirSync(dir), ['project.qgs']);
  });

  it('calls whileWriting once the content is on its way, and a failure there leaves the file as it was', async () => {
    const dir = join(folder, 'meanwhile');
    mkdirSync(dir);
    const path = join(dir, 'project.qgs');
    await writeFileAtomic(path, 'first');
    const seen: string[][] = [];
    await writeFileAtomic(path, [Buffer.from('sec'), Buffer.from('ond')], {
      whileWriting: () => seen.push(readdirSync(dir).sort()),
    });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.length, 2, 'the new file is beside the old one');
    assert.equal(readFileSync(path, 'utf8'), 'second');
    const failing = () => {
      throw new Error('meanwhile');
    };
    await assert.rejects(writeFileAtomic(path, [Buffer.from('third')], { whileWriting: failing }), /meanwhile/);
    assert.equal(readFileSync(path, 'utf8'), 'second');
    assert.deepEqual(readdirSync(dir), ['project.qgs']);
  });
});
