/**
 * Puts a large file that was just written in place of an older one without waiting for the disk.
 * ext4 (with its default auto_da_alloc) writes out all of a file's delayed-allocation blocks when
 * it is renamed over an existing file, for programs that replace files without flushing them, so
 * the rename of a large raster waits for the disk (docs/storage.md). Exchanging the two names (rename-exchange.ts) does not, and replaces the file in one step.
 *
 * Where names cannot be exchanged, the old file is moved aside first, since a rename onto a free
 * name does not write anything out either: the path is then missing between two system calls
 * (microseconds). A process killed between those two calls leaves the old file whole under its
 * `.replaced` name, which names this process (owned-files.ts): clearing leftovers puts it back once
 * the process is gone, if it is in a project's data folder. Nothing is flushed either way: like any
 * program that writes without syncing, a power loss soon after can leave the new file incomplete.
 */
import { constants, renameSync, unlinkSync } from 'node:fs';
import { type FileHandle, open, unlink } from 'node:fs/promises';

import { ownedSibling } from './owned-files.js';
import { exchangeNames } from './rename-exchange.js';

/** The kind of owned file (owned-files.ts) that a replaced file is while it is moved aside. */
export const REPLACED_KIND = 'replaced';

/**
 * The file at `path` held open, so that removing its last name does not free its blocks there and
 * then; undefined when there is none or it cannot be read. Not following a link, not waiting on a FIFO.
 */
function holdOpen(path: string): Promise<FileHandle | undefined> {
  return open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
}

/** Renames `path` to `aside`; false when there is nothing at `path`. */
function renameAside(path: string, aside: string): boolean {
  try {
    renameSync(path, aside);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Removes the replaced file's name; held open, the name goes at once and its blocks with the last descriptor. */
async function removeReplaced(path: string, held: FileHandle | undefined): Promise<void> {
  if (held) unlinkSync(path);
  else await unlink(path);
}

/**
 * Renames `from` to `to` after moving the file at `to` aside, and removes that one. The renames run
 * back to back on this thread, so `to` is missing for microseconds rather than for a turn of the
 * event loop.
 */
async function moveAsideAndIn(from: string, to: string, held: FileHandle | undefined): Promise<void> {
  const aside = ownedSibling(to, REPLACED_KIND);
  const replaced = renameAside(to, aside);
  try {
    renameSync(from, to);
  } catch (error) {
    if (replaced) renameSync(aside, to);
    throw error;
  }
  if (replaced) await removeReplaced(aside, held);
}

/**
 * Renames `from` to `to`, replacing the file at `to`. The replaced file's blocks are freed once its
 * last descriptor closes, after this resolves: freeing hundreds of megabytes takes a tenth of a
 * second or more, which nothing need wait for, and which the kernel finishes should this process
 * die first.
 */
export async function moveIntoPlace(from: string, to: string): Promise<void> {
  const held = await holdOpen(to);
  try {
    // Exchanged, the old file has the name `from` had, which clearing leftovers knows as well.
    if (held && (await exchangeNames(from, to))) await removeReplaced(from, held);
    else await moveAsideAndIn(from, to, held);
  } finally {
    void held?.close().catch(() => undefined);
  }
}
