import { randomUUID } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Removes a folder tree that MapProxy may be writing into: it is first renamed aside (atomic), so
 * tiles written from then on start a fresh folder instead of failing the removal.
 */
export async function removeDir(path: string): Promise<void> {
  const doomed = join(dirname(path), `.deleting-${basename(path)}-${randomUUID()}`);
  try {
    await rename(path, doomed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  await rm(doomed, { recursive: true, force: true });
}
