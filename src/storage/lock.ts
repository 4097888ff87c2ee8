import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';

/** Serialises async work per key inside this process. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(work);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/**
 * Holds a lock file for the duration of `work`, so that several Steward processes on one projects
 * folder take turns. A lock left by a killed process goes stale after 10 seconds.
 */
export async function withFileLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  await mkdir(dirname(lockPath), { recursive: true });
  const release = await lockfile.lock(dirname(lockPath), {
    lockfilePath: lockPath,
    realpath: false,
    stale: 10_000,
    retries: { retries: 600, factor: 1.2, minTimeout: 5, maxTimeout: 100 },
  });
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}
