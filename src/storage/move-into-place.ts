/**
 * Puts a large file that was just written in place of an older one without waiting for the disk.
 * ext4 (with its default auto_da_alloc) writes out all of a file's delayed-allocation blocks when
 * it is renamed over an existing file, for programs that replace files without flushing them:
 * for a raster of hundreds of megabytes, the rename then took from a tenth of a second to over a
 * second. A rename onto a free name does not, so the old file is moved aside first.
 *
 * Unlike an atomic replace, the path is missing between two system calls (microseconds), and
 * nothing is flushed: like any program that writes without syncing, a power loss soon after can
 * leave the new file incomplete. A process killed between those two calls leaves the old file
 * whole under its `.replaced` name, which names this process (owned-files.ts): clearing leftovers
 * puts it back once the process is gone, if it is in a project's data folder.
 */
import { constants, renameSync, unlinkSync } from 'node:fs';
import { type FileHandle, open, unlink } from 'node:fs/promises';

import { ownedSibling } from './owned-files.js';

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

/**
 * Renames `from` to `to`, moving the file at `to` aside first and removing it after. The renames
 * run back to back on this thread, so `to` is missing for microseconds rather than for a turn of
 * the event loop. The replaced file's blocks are freed once its last descriptor closes, after this
 * resolves: freeing hundreds of megabytes takes a tenth of a second or more, which nothing need
 * wait for, and which the kernel finishes should this process die first.
 */
export async function moveIntoPlace(from: string, to: string): Promise<void> {
  const held = await holdOpen(to);
  try {
    const aside = ownedSibling(to, REPLACED_KIND);
    const replaced = renameAside(to, aside);
    try {
      renameSync(from, to);
    } catch (error) {
      if (replaced) renameSync(aside, to);
      throw error;
    }
    if (!replaced) return;
    // Held open, the file loses its name at once; otherwise its blocks are freed off the event loop.
    if (held) unlinkSync(aside);
    else await unlink(aside);
  } finally {
    void held?.close().catch(() => undefined);
  }
}
