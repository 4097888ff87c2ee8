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

import { describe, it } from '../../test/support/node-test.js';
import { scratchFolder } from '../../test/support/scratch.js';
import { writeFileAtomic } from './atomic-file.js';
import { FilesystemStore } from './filesystem-store.js';
import { journalPaths, ProjectJournal, recoverJournal } from './project-journal.js';

const folder = scratchFolder('steward-journal-');

const layers = (count: number, tag: string) =>
  Array.from({ length: count }, (_, index) =>
    Buffer.from(`<maplayer id="${tag}${index}">${'x'.repeat(2000)}</maplayer>\n`),
  );

/**
 * A project file written whole with a journal started on it, then three journaled writes. Returns
 * the file's versions, the first written whole, and where the journal ended after its header and
 * after each record.
 */
async function journaled(name: string) {
  const dir = join(folder, name);
  mkdirSync(dir);
  const path = join(dir, `${name}.qgs`);
  const first = [Buffer.from('<qgis>\n'), ...layers(50, 'a'), Buffer.from('</qgis>\n')];
  await writeFileAtomic(path, first, { modified: 1_800_000_000 });
  const journal = await ProjectJournal.begin(path, first);
  if (!journal?.accepts()) throw new Error('the journal was not started');
  const second = [...first.slice(0, 30), ...layers(1, 'b'), ...first.slice(30)];
  const third = second.filter((_, index) => index !== 5);
  const fourth = [...third.slice(0, 10), ...layers(1, 'c'), ...third.slice(10)];
  const ends = [statSync(journalPaths(path).journal).size];
  for (const [index, pieces] of [second, third, fourth].entries()) {
    const modified = 1_800_000_001 + index;
    await journal.record(pieces, modified);
    await writeFileAtomic(path, pieces, { modified, flush: false });
    ends.push(statSync(journalPaths(path).journal).size);
  }
  return { path, versions: [first, second, third, fourth].map((pieces) => Buffer.concat(pieces)), ends, journal };
}

/** Puts the project file back as a power cut may leave it: its first version, of that time. */
function loseReplaces(path: string, versions: Buffer[]): void {
  writeFileSync(path, versions[0] ?? '');
  utimesSync(path, 1_800_000_000, 1_800_000_000);
}

/** The bytes of the project file, its checkpoint and its journal. */
function filesOf(path: string): Buffer[] {
  const { checkpoint, journal } = journalPaths(path);
  return [path, checkpoint, journal].map((file) => readFileSync(file));
}

/** Gives the journal's byte at `at` another value. */
function flipByte(path: string, at: number): void {
  const { journal } = journalPaths(path);
  const bytes = readFileSync(journal);
  bytes.writeUInt8((bytes.readUInt8(at) + 1) % 256, at);
  writeFileSync(journal, bytes);
}

describe('a project journal', () => {
  it('records a write as the bytes that changed, not the whole file', async () => {
    const { path } = await journaled('small');
    const { journal } = journalPaths(path);
    assert.ok(statSync(journal).size < 10_000, `${statSync(journal).size} bytes of journal for a 100 kB file`);
  });

  it('gives the project file its last write back when the file lost it', async () => {
    const { path, versions } = await journaled('lost');
    loseReplaces(path, versions);
    assert.equal(await recoverJournal(path), true);
    assert.deepEqual(readFileSync(path), versions[3]);
    assert.equal(statSync(path).mtimeMs, 1_800_000_003_000);
    const { checkpoint, journal } = journalPaths(path);
    assert.equal(existsSync(journal) || existsSync(checkpoint), false);
  });

  it('takes the whole records when the journal ends in one cut short', async () => {
    const { path, versions } = await journaled('torn');
    truncateSync(journalPaths(path).journal, statSync(journalPaths(path).journal).size - 10);
    loseReplaces(path, versions);
    await recoverJournal(path);
    assert.deepEqual(readFileSync(path), versions[2]);
  });

  it('takes the whole records when the last is cut short within its length and checksum', async () => {
    const { path, versions, ends } = await journaled('headless-tail');
    truncateSync(journalPaths(path).journal, (ends[2] ?? 0) + 5);
    loseReplaces(path, versions);
    await recoverJournal(path);
    assert.deepEqual(readFileSync(path), versions[2]);
  });

  it('ends the records at zeros a crash left after them', async () => {
    const { path, versions } = await journaled('zeros');
    appendFileSync(journalPaths(path).journal, Buffer.alloc(64));
    loseReplaces(path, versions);
    await recoverJournal(path);
    assert.deepEqual(readFileSync(path), versions[3]);
  });

  it('takes the whole records when the last was left partly zeros, whether cut short or followed by zeros', async () => {
    for (const [name, extra] of [
      ['zeroed-tail', 0],
      ['zeroed-longer', 4096],
    ] as const) {
      const { path, versions, ends } = await journaled(name);
      const { journal } = journalPaths(path);
      const size = statSync(journal).size;
      const keptOfLast = Math.floor(((ends[3] ?? 0) - (ends[2] ?? 0)) / 2);
      truncateSync(journal, (ends[2] ?? 0) + keptOfLast);
      appendFileSync(journal, Buffer.alloc(size - statSync(journal).size + extra));
      loseReplaces(path, versions);
      await recoverJournal(path);
      assert.deepEqual(readFileSync(path), versions[2], name);
    }
  });

  it('refuses a journal whose first of three records fails its check, leaving every file as it was', async () => {
    for (const [name, byteOfFirst] of [
      ['damaged-body', 8 + 3],
      ['damaged-checksum', 4],
      ['damaged-length', 0],
    ] as const) {
      const { path, versions, ends } = await journaled(name);
      flipByte(path, (ends[0] ?? 0) + byteOfFirst);
      loseReplaces(path, versions);
      const before = filesOf(path);
      await assert.rejects(recoverJournal(path), /: record 1 \(at byte \d+\) fails its check and is not the last$/);
      assert.deepEqual(filesOf(path), before, name);
    }
  });

  it('refuses a journal whose middle record was zeroed, leaving every file as it was', async () => {
    const { path, versions, ends } = await journaled('zeroed-middle');
    const { journal } = journalPaths(path);
    const bytes = readFileSync(journal);
    bytes.fill(0, ends[1], ends[2]);
    writeFileSync(journal, bytes);
    loseReplaces(path, versions);
    const before = filesOf(path);
    await assert.rejects(recoverJournal(path), /record 2 \(at byte \d+\) fails its check and is not the last/);
    assert.deepEqual(filesOf(path), before);
  });

  it('keeps a project file changed after the journal was written', async () => {
    const { path } = await journaled('changed');
    writeFileSync(path, '<qgis>saved by QGIS</qgis>');
    utimesSync(path, 1_800_000_100, 1_800_000_100);
    await recoverJournal(path);
    assert.equal(readFileSync(path, 'utf8'), '<qgis>saved by QGIS</qgis>');
  });

  it('leaves a project file alone when its checkpoint is not the one the journal was written against', async () => {
    const { path, versions } = await journaled('stale');
    loseReplaces(path, versions);
    await writeFileAtomic(journalPaths(path).checkpoint, 'another checkpoint');
    await recoverJournal(path);
    assert.deepEqual(readFileSync(path), versions[0]);
  });

  it('refuses a journal whose header is damaged, leaving every file as it was', async () => {
    const { path } = await journaled('headless');
    const { journal } = journalPaths(path);
    const damaged = readFileSync(journal);
    damaged.write('XXXXXXXX');
    writeFileSync(journal, damaged);
    const before = filesOf(path);
    await assert.rejects(recoverJournal(path), /does not start with a journal's header/);
    assert.deepEqual(filesOf(path), before);
  });

  it('takes back a record whose file was not replaced, and takes no more records', async () => {
    const { path, journal, versions } = await journaled('undo');
    const size = statSync(journalPaths(path).journal).size;
    const takeBack = await journal.record([Buffer.from('never written')], 1_800_000_004);
    await takeBack();
    assert.equal(statSync(journalPaths(path).journal).size, size);
    assert.equal(journal.accepts(), false);
    await recoverJournal(path);
    assert.deepEqual(readFileSync(path), versions[3]);
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
