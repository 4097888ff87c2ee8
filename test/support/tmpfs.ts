/**
 * Real file systems mounted for a test (as root): a small tmpfs for the tests of a full disk, a
 * ramfs for those of a file system without direct writes.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, open, rmdir, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Mounted {
  /** The mount point. */
  dir: string;
  unmount(): Promise<void>;
}

export interface Tmpfs extends Mounted {
  /** Fills the file system but for `leave` bytes with one file, and returns its path. */
  fill(leave?: number): Promise<string>;
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

/** A file system of `type` mounted on a new folder; unmount it (and the folder goes) after the test. */
async function mountNew(type: string, options: string): Promise<Mounted> {
  const dir = await mkdtemp(join(tmpdir(), `steward-${type}-`));
  await run('mount', ['-t', type, '-o', options, type, dir]);
  return {
    dir,
    async unmount() {
      await run('umount', ['--lazy', dir]);
      await rmdir(dir);
    },
  };
}

/** A tmpfs of `bytes` bytes on a new folder. */
export async function mountTmpfs(bytes: number): Promise<Tmpfs> {
  const mounted = await mountNew('tmpfs', `size=${bytes},mode=0755`);
  return {
    ...mounted,
    async fill(leave = 0) {
      const path = join(mounted.dir, `filler-${Date.now()}`);
      await writeUntilFull(path, leave);
      return path;
    },
  };
}

/** A ramfs on a new folder: a file system that refuses direct writes (O_DIRECT) with EINVAL. */
export function mountRamfs(): Promise<Mounted> {
  return mountNew('ramfs', 'mode=0755');
}
