import assert from 'node:assert/strict';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { scratchFolder } from '../../test/support/scratch.js';
import { writeFileAtomic } from './atomic-file.js';
import { FilesystemStore } from './filesystem-store.js';
import { journalPaths, ProjectJournal, recoverJournal } from './project-journal.js';

const folder = scratchFolder('steward-journal-');

const layers = (count: number, tag: string) =>
  Array.from({ length: count }, (_, index) =>
    Buffer.from(`<maplayer id="${tag}${index}">${'x'.repeat(2000)}</maplayer>\n`),
  );

/** A project file written whole with a journal started on it, then two journaled writes. */
async function journaled(name: string) {
  const dir = join(folder, name);
  mkdirSync(dir);
  const path = join(dir, `${name}.qgs`);
  const first = [Buffer.from('<qgis>\n'), ...layers(50, 'a'), Buffer.from('</qgis>\n')];
  await writeFileAtomic(path, first, { modified: 1_800_000_000 });
  const journal = await ProjectJournal.begin(path, first);
  if (!journal?.accepts()) throw new Error('the journal was not started');
  const second = [...first.slice(0, 30), ...layers(1, 'b'), ...first.slice(30)];
  await journal.record(second, 1_800_000_001);
  await writeFileAtomic(path, second, { modified: 1_800_000_001, flush: false });
  const third = second.filter((_, index) => index !== 5);
  await journal.record(third, 1_800_000_002);
  await writeFileAtomic(path, third, { modified: 1_800_000_002, flush: false });
  return { path, first, third: Buffer.concat(third), journal };
}

describe('a project journal', () => {
  it('records a write as the bytes that changed, not the whole file', async () => {
    const { path } = await journaled('small');
    const { journal } = journalPaths(path);
    assert.ok(statSync(journal).size < 10_000, `${statSync(journal).size} bytes of journal for a 100 kB file`);
  });

  it('gives the project file its last write back when the file lost it', async () => {
    const { path, first, third } = await journaled('lost');
    writeFileSync(path, Buffer.concat(first));
    utimesSync(path, 1_800_000_000, 1_800_000_000);
    assert.equal(await recoverJournal(path), true);
    assert.deepEqual(readFileSync(path), third);
    assert.equal(statSync(path).mtimeMs, 1_800_000_002_000);
    const { checkpoint, journal } = journalPaths(path);
    assert.equal(existsSync(journal) || existsSync(checkpoint), false);
  });

  it('takes the last whole record when the journal ends in one cut short', async () => {
    const { path, first } = await journaled('torn');
    const { journal } = journalPaths(path);
    truncateSync(journal, statSync(journal).size - 10);
    writeFileSync(path, '');
    utimesSync(path, 1_800_000_000, 1_800_000_000);
    await recoverJournal(path);
    const second = [...first.slice(0, 30), ...layers(1, 'b'), ...first.slice(30)];
    assert.deepEqual(readFileSync(path), Buffer.concat(second));
  });

  it('ends the records at zeros a crash left after them', async () => {
    const { path, first, third } = await journaled('zeros');
    appendFileSync(journalPaths(path).journal, Buffer.alloc(64));
    writeFileSync(path, Buffer.concat(first));
    utimesSync(path, 1_800_000_000, 1_800_000_000);
    await recoverJournal(path);
    assert.deepEqual(readFileSync(path), third);
  });

  it('keeps a project file changed after the journal was written', async () => {
    const { path } = await journaled('changed');
    writeFileSync(path, '<qgis>saved by QGIS</qgis>');
    utimesSync(path, 1_800_000_100, 1_800_000_100);
    await recoverJournal(path);
    assert.equal(readFileSync(path, 'utf8'), '<qgis>saved by QGIS</qgis>');
  });

  it('leaves a project file alone when its checkpoint is not the one the journal was written against', async () => {
    const { path, first } = await journaled('stale');
    writeFileSync(path, Buffer.concat(first));
    utimesSync(path, 1_800_000_000, 1_800_000_000);
    await writeFileAtomic(journalPaths(path).checkpoint, 'another checkpoint');
    await recoverJournal(path);
    assert.deepEqual(readFileSync(path), Buffer.concat(first));
  });

  it('refuses a journal whose header is damaged, leaving every file as it was', async () => {
    const { path } = await journaled('headless');
    const { checkpoint, journal } = journalPaths(path);
    const damaged = readFileSync(journal);
    damaged.write('XXXXXXXX');
    writeFileSync(journal, damaged);
    const before = [path, checkpoint, journal].map((file) => readFileSync(file));
    await assert.rejects(recoverJournal(path), /does not start with a journal's header/);
    assert.deepEqual(
      [path, checkpoint, journal].map((file) => readFileSync(file)),
      before,
    );
  });

  it('takes back a record whose file was not replaced, and takes no more records', async () => {
    const { path, journal, third } = await journaled('undo');
    const size = statSync(journalPaths(path).journal).size;
    const takeBack = await journal.record([Buffer.from('never written')], 1_800_000_003);
    await takeBack();
    assert.equal(statSync(journalPaths(path).journal).size, size);
    assert.equal(journal.accepts(), false);
    await recoverJournal(path);
    assert.deepEqual(readFileSync(path), third);
  });
});

describe('the filesystem store with journals', () => {
  it('writes a project through its journal, and a new process settles the journal it finds', async () => {
    const dir = join(folder, 'store');
    const store = new FilesystemStore(dir);
    const ref = { name: 'p', schema: 'public' };
    await store.create(ref, '<qgis/>');
    const versions = [layers(100, 'v'), layers(101, 'v'), layers(99, 'v')];
    for (const pieces of versions) await store.write(ref, pieces);
    const path = join(dir, 'p', 'p.qgs');
    const { checkpoint, journal } = journalPaths(path);
    assert.ok(existsSync(checkpoint) && existsSync(journal));
    assert.deepEqual(readFileSync(path), Buffer.concat(versions[2] ?? []));
    assert.ok(statSync(journal).size < 5000, 'the later writes went to the journal');

    // Another process removing the journal makes this one write whole again, and start anew.
    assert.equal((await new FilesystemStore(dir).clearLeftovers()).cleared, 1);
    assert.equal(existsSync(journal), false);
    await store.write(ref, layers(98, 'v'));
    assert.deepEqual(readFileSync(path), Buffer.concat(layers(98, 'v')));
    assert.ok(existsSync(journal) && existsSync(checkpoint));
    assert.deepEqual(readFileSync(checkpoint), readFileSync(path));
  });
});
