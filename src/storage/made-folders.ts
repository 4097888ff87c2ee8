/**
 * Folders a request made for what it writes, removed again when the write is refused: only while
 * empty, so that a folder another request has put something in meanwhile stays, as does every
 * folder that existed before the request (a recursive mkdir answers the first folder it made).
 */
import { rmdir } from 'node:fs/promises';
import { dirname, relative } from 'node:path';

/** Removes `folder` if it is empty; false when it holds something. Gone already is no error. */
export async function removeIfEmpty(folder: string): Promise<boolean> {
  try {
    await rmdir(folder);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return true;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Removes `deepest` and the folders above it up to `first`, the first folder the request's
 * recursive mkdir made (undefined: it made none), stopping at the first that is not empty.
 */
export async function removeMadeFolders(deepest: string, first: string | undefined): Promise<void> {
  if (first === undefined) return;
  for (let folder = deepest; ; folder = dirname(folder)) {
    const below = relative(first, folder);
    if (below.startsWith('..') || !(await removeIfEmpty(folder)) || below === '') return;
  }
}
