import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import Database from 'better-sqlite3';

/** Serialises async work per key inside this process. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(work);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

const LOCK_WAIT_MS = 60_000;
const MAX_PAUSE_MS = 50;

function isBusy(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === 'SQLITE_BUSY';
}

/** Takes the database's write lock, polling: better-sqlite3 would block the event loop while it waits. */
async function takeWriteLock(db: Database.Database, lockPath: string): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      db.exec('BEGIN IMMEDIATE');
      return;
    } catch (error) {
      if (!isBusy(error)) throw error;
      if (Date.now() > deadline)
        throw new Error(`${lockPath} has been locked by another process for over ${LOCK_WAIT_MS / 1000} s`, {
          cause: error,
        });
    }
    await sleep(pause);
  }
}

/**
 * Holds the lock file `lockPath` for the duration of `work`, so that several Steward processes on
 * one folder take turns. The lock is SQLite's write lock on that (empty) database file: a POSIX
 * record lock, which the kernel releases when its process dies, so a killed process never holds up
 * the next one (a lock directory, as proper-lockfile makes, is judged abandoned only by its age).
 * Lock files are never deleted: a process may be waiting on the file, and a new file of the same
 * name would let a second process in.
 */
export async function withFileLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  await mkdir(dirname(lockPath), { recursive: true });
  const db = new Database(lockPath, { timeout: 0 });
  try {
    // Nothing is ever written: with the journal in memory, no -journal file appears beside the lock.
    db.pragma('journal_mode = MEMORY');
    await takeWriteLock(db, lockPath);
    try {
      return await work();
    } finally {
      db.exec('ROLLBACK');
    }
  } finally {
    db.close();
  }
}
