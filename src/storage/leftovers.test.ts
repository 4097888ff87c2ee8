import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { afterEach, beforeEach, describe, it } from '../../test/support/node-test.js';
import { FilesystemStore } from './filesystem-store.js';
import { INTERNAL_DB_JOURNAL, INTERNAL_DB_NAME, InternalDatabase } from './internal-db.js';
import { REPLACED_KIND } from './move-into-place.js';
import { ownedSibling, type Owner, processOwner } from './owned-files.js';

const ref = (name: string) => ({ name, schema: 'public' });

/** Every file under `dir` but the lock files, relative to it. */
function files(dir: string, under = dir): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !(dir === under && entry.name === '.locks'))
    .flatMap((entry) =>
      entry.isDirectory() ? files(join(dir, entry.name), under) : [relative(under, join(dir, entry.name))],
    )
    .sort();
}

/**
 * Kills a process in the middle of a transaction on the internal database of `dataDir`. With
 * `spill`, the transaction outgrows SQLite's page cache, so changed pages reach the database file
 * and the journal left behind is hot: it must be rolled back. Without, the journal was never used.
 */
async function interruptTransaction(dataDir: string, spill: boolean): Promise<void> {
  const filler = `CREATE TABLE filler (x); INSERT INTO filler WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) SELECT randomblob(100) FROM n;`;
  const script = `
    const db = require('better-sqlite3')(${JSON.stringify(join(dataDir, INTERNAL_DB_NAME))});
    db.pragma('cache_size = 10');
    db.exec(${JSON.stringify(`BEGIN; UPDATE default_styles SET style = 'half-done'; ${spill ? filler : ''}`)});
    console.log('in transaction');
    setInterval(() => undefined, 1000);`;
  const child = spawn(process.execPath, ['-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout, 'data');
  child.kill('SIGKILL');
  await once(child, 'exit');
  assert.ok(existsSync(join(dataDir, INTERNAL_DB_JOURNAL)), 'the killed transaction left its journal');
}

/** The owner that a process which has ended named in its files. */
async function endedProcessOwner(): Promise<Owner> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1000)'], { stdio: 'ignore' });
  const owner = child.pid === undefined ? undefined : processOwner(child.pid);
  child.kill('SIGKILL');
  await once(child, 'exit');
  assert.ok(owner, 'the child process was running');
  return owner;
}

describe('clearing what a killed Steward process left in the projects folder', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-leftovers-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('removes temporary files and staging folders, and rolls back an interrupted transaction', async () => {
    const store = new FilesystemStore(dir);
    await store.create(ref('kept'), '<qgis/>');
    const project = join(dir, 'kept');
    InternalDatabase.ensure(project);
    writeFileSync(join(project, 'red.qml'), '<qgis/>');
    writeFileSync(join(project, '.notes'), 'not written by Steward');
    writeFileSync(join(project, `.kept.qgs.${randomUUID()}.tmp`), '<qgis');
    writeFileSync(join(project, `.red.qml.${randomUUID()}.tmp`), '<qgis');
    for (const staging of ['.creating-new', '.deleting-old']) {
      mkdirSync(join(dir, staging));
      writeFileSync(join(dir, staging, 'some.qgs'), '<qgis/>');
    }
    await interruptTransaction(project, true);

    assert.equal((await store.clearLeftovers()).cleared, 5);
    assert.deepEqual(files(dir), ['kept/.notes', 'kept/kept.qgs', 'kept/red.qml', `kept/${INTERNAL_DB_NAME}`]);
    assert.deepEqual(
      InternalDatabase.use(project, (db) => db.defaultStyles()),
      { point: 'default', line: 'default', polygon: 'default' },
    );
    assert.equal((await store.clearLeftovers()).cleared, 0);
  });

  it('removes the journal of a transaction killed before it changed the database', async () => {
    const store = new FilesystemStore(dir);
    await store.create(ref('kept'), '<qgis/>');
    const project = join(dir, 'kept');
    InternalDatabase.ensure(project);
    await interruptTransaction(project, false);

    assert.equal((await store.clearLeftovers()).cleared, 1);
    assert.deepEqual(files(dir), ['kept/kept.qgs', `kept/${INTERNAL_DB_NAME}`]);
    assert.deepEqual(
      InternalDatabase.use(project, (db) => db.defaultStyles()),
      { point: 'default', line: 'default', polygon: 'default' },
    );
  });

  it("clears the calculator's files of a process that is gone, putting back the raster it had moved aside, and keeps those of live processes", async () => {
    const store = new FilesystemStore(dir);
    await store.create(ref('site'), '<qgis/>');
    const project = join(dir, 'site');
    const ended = await endedProcessOwner();
    const make = (name: string, kind: string, content: string, owner?: Owner): string => {
      const path = ownedSibling(join(project, name), kind, owner);
      writeFileSync(path, content);
      return relative(dir, path);
    };
    const work = make('new.tif', 'work', 'half a raster', ended);
    writeFileSync(join(dir, `${work}.aux.xml`), '<PAMDataset/>');
    make('lost.tif', REPLACED_KIND, 'the old raster', ended);
    make('kept.tif', REPLACED_KIND, 'an older raster', ended);
    writeFileSync(join(project, 'kept.tif'), 'the new raster');
    const running = make('running.tif', 'work', 'this process computes it');
    const elsewhere = make('remote.tif', 'work', 'computed on another host', { ...ended, host: 'ffffffff' });

    assert.equal((await store.clearLeftovers()).cleared, 4);
    assert.deepEqual(
      files(dir),
      [elsewhere, running, 'site/kept.tif', 'site/lost.tif', 'site/site.qgs', 'site/steward.db'].sort(),
    );
    assert.equal(readFileSync(join(project, 'lost.tif'), 'utf8'), 'the old raster');
    assert.equal(readFileSync(join(project, 'kept.tif'), 'utf8'), 'the new raster');
  });

  it("leaves a live writer's temporary file alone until the writer lets go of the project's lock", async () => {
    const [writer, starting] = [new FilesystemStore(dir), new FilesystemStore(dir)];
    await writer.create(ref('busy'), '<qgis/>');
    const temporary = join(dir, 'busy', `.busy.qgs.${randomUUID()}.tmp`);
    let cleared: Promise<number> | undefined;
    await writer.withLock(ref('busy'), async () => {
      writeFileSync(temporary, '<qgis>new</qgis>');
      cleared = starting.clearLeftovers().then((report) => report.cleared);
      await sleep(300);
      assert.ok(existsSync(temporary), 'the temporary file of the write in progress is still there');
      renameSync(temporary, join(dir, 'busy', 'busy.qgs'));
    });
    assert.equal(await cleared, 0);
    assert.equal(readFileSync(join(dir, 'busy', 'busy.qgs'), 'utf8'), '<qgis>new</qgis>');
  });
});
