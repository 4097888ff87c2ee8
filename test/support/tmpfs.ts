/** Small real file systems for the tests of a full disk: a tmpfs mounted for the test (as root). */
import { execFile } from 'node:child_process';
import { mkdtemp, open, rmdir, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Tmpfs {
  /** The mount point. */
  dir: string;
  /** Fills the file system but for `leave` bytes with one file, and returns its path. */
  fill(leave?: number): Promise<string>;
  unmount(): Promise<void>;
}

/** Writes zeros to `path` until the file system refuses, in ever smaller pieces down to a page. */
async function writeUntilFull(path: string, leave: number): Promise<void> {
  const file = await open(path, 'w');
  try {
    for (let piece = 1 << 20; piece >= 4096; piece /= 2) {
      const zeros = Buffer.alloc(piece);
      for (;;) {
        const written = await file.write(zeros).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOSPC') return undefined;
          throw error;
        });
        if (written === undefined) break;
      }
    }
  } finally {
    await file.close();
  }
  if (leave > 0) await truncate(path, Math.max(0, (await stat(path)).size - leave));
}

/** A tmpfs of `bytes` bytes on a new folder; unmount it (and the folder goes) after the test. */
export async function mountTmpfs(bytes: number): Promise<Tmpfs> {
  const dir = await mkdtemp(join(tmpdir(), 'steward-tmpfs-'));
  await run('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, 'tmpfs', dir]);
  return {
    dir,
    async fill(leave = 0) {
      const path = join(dir, `filler-${Date.now()}`);
      await writeUntilFull(path, leave);
      return path;
    },
    async unmount() {
      await run('umount', ['--lazy', dir]);
      await rmdir(dir);
    },
  };
}
