import { randomUUID } from 'node:crypto';
import { type FileHandle, link, open, rename, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

import { exchangeNames } from './rename-exchange.js';

const TEMPORARY_SUFFIX = /\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

/** Code points of a file's name kept in its hidden siblings' names: 160 bytes at most, which leaves room for the rest. */
const NAME_CODE_POINTS = 40;

/**
 * `.<name>.<uuid><suffix>` beside `path`, hidden so that listings never show it, with at most 40
 * code points of its name so that it is a valid file name however long the name.
 */
export function hiddenSibling(path: string, suffix: string): string {
  const name = Array.from(basename(path)).slice(0, NAME_CODE_POINTS).join('');
  return join(dirname(path), `.${name}.${randomUUID()}${suffix}`);
}

/** A temporary name beside `path`, which clearing leftovers knows. */
function temporarySibling(path: string): string {
  return hiddenSibling(path, '.tmp');
}

/** True for the name of a temporary file that `writeFileAtomic` makes (and leaves if killed). */
export function isTemporaryFile(fileName: string): boolean {
  return fileName.startsWith('.') && TEMPORARY_SUFFIX.test(fileName);
}

/** Flushes a file, or a folder's entries, to the disk. */
export async function flushToDisk(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Most buffers one writev takes (Linux's IOV_MAX); libuv writes no more and reports a short write. */
const MAX_BUFFERS = 1024;

/** Writes the pieces in order, with as few system calls as the kernel allows. */
export async function writePieces(handle: FileHandle, pieces: readonly Uint8Array[]): Promise<void> {
  let pending = pieces.filter((piece) => piece.byteLength > 0);
  while (pending.length > 0) {
    let { bytesWritten } = await handle.writev(pending.slice(0, MAX_BUFFERS));
    let done = 0;
    while (done < pending.length && bytesWritten >= (pending[done] as Uint8Array).byteLength) {
      bytesWritten -= (pending[done] as Uint8Array).byteLength;
      done++;
    }
    pending = pending.slice(done);
    if (bytesWritten > 0) pending[0] = (pending[0] as Uint8Array).subarray(bytesWritten);
  }
}

export interface AtomicWriteOptions {
  /** The new file's permissions (0o666 less the umask by default). */
  mode?: number;
  /** The new file's modification time (seconds since the epoch). */
  modified?: number;
  /**
   * Frees the replaced file after the write resolves rather than during it: renaming a new file
   * over one of megabytes frees the old one's blocks on the spot, a millisecond or more. The old
   * file keeps a temporary name until then, which clearing leftovers removes if the process dies.
   */
  releaseLater?: boolean;
  /**
   * False to leave the new file in the system's cache rather than wait for the disk: readers see it
   * at once and a killed process loses nothing, but a power cut may; the caller has made the content
   * durable another way (the project journal).
   */
  flush?: boolean;
  /**
   * Called once the content is handed to the system and before its write is done: work to do
   * meanwhile (a large file's write leaves the event loop idle for milliseconds).
   */
  whileWriting?: () => void;
}

/**
 * Links the file at `path` under a temporary name beside `beside`; undefined when there is no such
 * file, or when the file system has no hard links.
 */
async function linkTemporary(path: string, beside: string): Promise<string | undefined> {
  const linked = temporarySibling(beside);
  try {
    await link(path, linked);
    return linked;
  } catch {
    return undefined;
  }
}

/** The file at `path` under a temporary name too (without hard links, the rename frees it as it replaces it). */
function keepReplaced(path: string): Promise<string | undefined> {
  return linkTemporary(path, path);
}

/**
 * Puts `from` in the place of `to`, the file `to` named kept under a temporary name meanwhile;
 * returns what frees that file, which nothing need wait on (a name left behind is a leftover like
 * any temporary file). Renaming over the last link of a large file frees its blocks during the
 * rename; exchanging the two names, where the system can, also spares ext4 writing the new file
 * out at once (rename-exchange.ts).
 */
async function renameKeepingReplaced(from: string, to: string): Promise<() => void> {
  if (await exchangeNames(from, to)) return () => void unlink(from).catch(() => undefined);
  const replaced = await keepReplaced(to);
  try {
    await rename(from, to);
  } catch (error) {
    if (replaced) await rm(replaced, { force: true });
    throw error;
  }
  return () => {
    if (replaced) unlink(replaced).catch(() => undefined);
  };
}

/** A file's next content, written beside it under a temporary name, not yet in its place. */
export interface StagedFile {
  /** Puts the new content in the file's place: readers see it from then on. */
  commit(): Promise<void>;
  /** Removes the temporary file, leaving the file as it was. */
  discard(): Promise<void>;
}

/**
 * Writes `data` (or its pieces, one after the other) to a new file beside `path`, flushed unless
 * told otherwise; `path` is replaced only by the staged file's commit.
 */
export async function stageFile(
  path: string,
  data: string | Uint8Array | readonly Uint8Array[],
  options: AtomicWriteOptions = {},
): Promise<StagedFile> {
  const temporary = temporarySibling(path);
  const discard = (): Promise<void> => rm(temporary, { force: true });
  try {
    const handle = await open(temporary, 'wx', options.mode);
    try {
      const writing = Array.isArray(data) ? writePieces(handle, data) : handle.writeFile(data as string | Uint8Array);
      try {
        options.whileWriting?.();
      } finally {
        await writing;
      }
      if (options.modified !== undefined) await handle.utimes(options.modified, options.modified);
      if (options.flush !== false) await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await discard();
    throw error;
  }
  return { commit: () => commitStaged(temporary, path, options), discard };
}

/** Renames the staged file over `path`, and flushes the folder when the write is to be durable. */
async function commitStaged(temporary: string, path: string, options: AtomicWriteOptions): Promise<void> {
  let release = (): void => undefined;
  try {
    if (options.releaseLater) release = await renameKeepingReplaced(temporary, path);
    else await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  if (options.flush !== false) await flushToDisk(dirname(path));
  release();
}

/**
 * Writes `data` (or its pieces, one after the other) to a new file beside `path`, flushes it and
 * renames it over `path`, so readers see the old content or the new, never a mix, and a crash
 * leaves the old file intact.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array | readonly Uint8Array[],
  options: AtomicWriteOptions = {},
): Promise<void> {
  await (await stageFile(path, data, options)).commit();
}

/** Gives the file at `from` the name `to` as well, replacing what `to` named; false without hard links. */
export async function linkOver(from: string, to: string): Promise<boolean> {
  const linked = await linkTemporary(from, to);
  if (linked === undefined) return false;
  try {
    await rename(linked, to);
  } catch (error) {
    await rm(linked, { force: true });
    throw error;
  }
  return true;
}
