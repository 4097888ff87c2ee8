/**
 * Uploads are written as they arrive to hidden files beside where they go (project-archives.ts:
 * `.upload.<uuid>.tmp` in the upload root; data-files.ts: `.<uuid>.<name>` beside the file), and
 * renamed or removed once done. A process that dies mid-upload leaves its file: they are cleared at
 * start, once old enough that no upload can still be writing them.
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

/** Removes the abandoned upload files under `folder`; how many. Files that go meanwhile are no error. */
export async function clearUploadLeftovers(folder: string, now: number = Date.now()): Promise<number> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  let cleared = 0;
  for (const entry of entries) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) cleared += await clearUploadLeftovers(path, now);
    else if (entry.isFile() && isUploadTemporary(entry.name) && (await abandoned(path, now))) {
      await rm(path, { force: true });
      cleared++;
    }
  }
  return cleared;
}

async function abandoned(path: string, now: number): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  return info !== undefined && now - info.mtimeMs > ABANDONED_AFTER_MS;
}
