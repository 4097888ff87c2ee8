import { statSync } from 'node:fs';
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

/** Lock databases kept open between writes, at most: each is a file descriptor of this process. */
const MAX_IDLE_LOCKS = 64;

/** An open lock database, and the file it was opened on (a lock file replaced on disk is opened anew). */
interface LockHandle {
  db: Database.Database;
  file: string;
}

/**
 * Lock databases not in use, by path, least recently used first: opening one (a file, a pragma, a
 * close) cost about as much as the rest of a small project's write, all of it on the event loop.
 */
const idleLocks = new Map<string, LockHandle>();

/** The lock file's device and inode: an open database keeps its inode, so a match is that file. */
function fileOf(path: string): string | undefined {
  const info = statSync(path, { bigint: true, throwIfNoEntry: false });
  return info && `${info.dev}:${info.ino}`;
}

async function openLock(lockPath: string): Promise<LockHandle> {
  const kept = idleLocks.get(lockPath);
  idleLocks.delete(lockPath);
  if (kept && kept.file === fileOf(lockPath)) return kept;
  kept?.db.close();
  await mkdir(dirname(lockPath), { recursive: true });
  const db = new Database(lockPath, { timeout: 0 });
  // Nothing is ever written: with the journal in memory, no -journal file appears beside the lock.
  db.pragma('journal_mode = MEMORY');
  return { db, file: fileOf(lockPath) ?? '' };
}

/** Ends the transaction that held the lock and keeps the database for the next write (closed if that fails). */
function release(lockPath: string, handle: LockHandle): void {
  try {
    handle.db.exec('ROLLBACK');
  } catch (error) {
    handle.db.close();
    throw error;
  }
  keepLock(lockPath, handle);
}

function keepLock(lockPath: string, handle: LockHandle): void {
  const replaced = idleLocks.get(lockPath);
  if (replaced) replaced.db.close();
  idleLocks.delete(lockPath);
  idleLocks.set(lockPath, handle);
  for (const [path, idle] of idleLocks) {
    if (idleLocks.size <= MAX_IDLE_LOCKS) break;
    idle.db.close();
    idleLocks.delete(path);
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
  const handle = await openLock(lockPath);
  try {
    await takeWriteLock(handle.db, lockPath);
  } catch (error) {
    handle.db.close();
    throw error;
  }
  try {
    return await work();
  } finally {
    release(lockPath, handle);
  }
}
