import { type BigIntStats, statSync } from 'node:fs';

/**
 * A regular file's version (inode, size, modification time), or undefined when there is none.
 * Synchronous on purpose: it runs on every read request, where a local stat takes microseconds
 * and the asynchronous one costs two hand-offs to libuv's thread pool, the larger part of a read.
 */
export function fileVersion(path: string): string | undefined {
  const info = fileStats(path);
  return info && `${info.ino}:${info.size}:${info.mtimeNs}`;
}

/** A regular file's stats, or undefined when there is none. */
export function fileStats(path: string): BigIntStats | undefined {
  try {
    const info = statSync(path, { bigint: true, throwIfNoEntry: false });
    return info?.isFile() ? info : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** A folder's version (inode, modification time): it changes when an entry is added, removed or renamed. */
export function folderVersion(path: string): string | undefined {
  const info = statSync(path, { bigint: true, throwIfNoEntry: false });
  return info?.isDirectory() ? `${info.ino}:${info.mtimeNs}` : undefined;
}
