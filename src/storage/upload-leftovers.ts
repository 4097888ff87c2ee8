/**
 * Uploads are written as they arrive to hidden files and folders beside where they go (a bundle's
 * data files in `.upload.<uuid>.tmp` in the project's folder of the upload root, staged-folder.ts;
 * data-files.ts: a data file in `.upload.<uuid>.tmp` beside it; `.<uuid>.<name>` files beside it
 * before), and renamed or removed once done. A process
 * that dies mid-upload leaves them: they are cleared at start, once old enough that no upload can
 * still be writing them.
 */
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

const UPLOAD_TEMPORARY = /^\.(upload\.)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\./;

/** Twice the longest a body may take to arrive (300 s): an older file is no upload in progress. */
export const ABANDONED_AFTER_MS = 10 * 60_000;

/** Whether `name` is one of an upload's hidden files. */
export function isUploadTemporary(name: string): boolean {
  return UPLOAD_TEMPORARY.test(name);
}

/** Removes the abandoned upload files and folders under `folder`; how many. Ones that go meanwhile are no error. */
export async function clearUploadLeftovers(folder: string, now: number = Date.now()): Promise<number> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  let cleared = 0;
  for (const entry of entries) {
    const path = join(folder, entry.name);
    const leftover = isUploadTemporary(entry.name) && (entry.isFile() || entry.isDirectory());
    if (leftover && (await abandoned(path, now))) {
      await rm(path, { recursive: true, force: true });
      cleared++;
    } else if (entry.isDirectory() && !leftover) cleared += await clearUploadLeftovers(path, now);
  }
  return cleared;
}

async function abandoned(path: string, now: number): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  return info !== undefined && now - info.mtimeMs > ABANDONED_AFTER_MS;
}
