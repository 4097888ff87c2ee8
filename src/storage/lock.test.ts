import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { after, describe, it } from '../../test/support/node-test.js';
import { withFileLock } from './lock.js';

const folder = mkdtempSync(join(tmpdir(), 'steward-lock-'));
after(() => rmSync(folder, { recursive: true, force: true }));

/** Whether another connection, as another process opens it, can take the lock file's write lock now. */
function othersMayWrite(lockPath: string): boolean {
  const other = new Database(lockPath, { timeout: 0 });
  try {
    other.exec('BEGIN IMMEDIATE');
    other.exec('ROLLBACK');
    return true;
  } catch (error) {
    if (error instanceof Database.SqliteError && error.code === 'SQLITE_BUSY') return false;
    throw error;
  } finally {
    other.close();
  }
}

describe('file locks', () => {
  it('hold others off while held, also once the lock file was removed and made again between two holds', async () => {
    const lockPath = join(folder, 'locks', 'project.lock');
    for (let hold = 0; hold < 3; hold++) {
      assert.equal(await withFileLock(lockPath, async () => othersMayWrite(lockPath)), false);
      assert.equal(othersMayWrite(lockPath), true);
    }
    rmSync(join(folder, 'locks'), { recursive: true });
    assert.equal(await withFileLock(lockPath, async () => othersMayWrite(lockPath)), false);
    assert.equal(othersMayWrite(lockPath), true);
  });

  it('are released when the work throws', async () => {
    const lockPath = join(folder, 'throws.lock');
    await assert.rejects(
      withFileLock(lockPath, async () => {
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.equal(othersMayWrite(lockPath), true);
  });

  it('let two holders in this process take turns', async () => {
    const lockPath = join(folder, 'turns.lock');
    const order: string[] = [];
    let aHolds = (): void => undefined;
    const aIn = new Promise<void>((resolve) => (aHolds = resolve));
    const hold = (name: string) =>
      withFileLock(lockPath, async () => {
        order.push(`${name} in`);
        aHolds();
        await new Promise((resolve) => setTimeout(resolve, 20));
        order.push(`${name} out`);
      });
    const a = hold('a');
    // b asks once a holds the lock: which of two simultaneous callers wins is not the point.
    await aIn;
    await Promise.all([a, hold('b')]);
    assert.deepEqual(order, ['a in', 'a out', 'b in', 'b out']);
  });
});
