import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

import { isTemporaryFile } from '../../src/storage/atomic-file.js';
import { INTERNAL_DB_JOURNAL } from '../../src/storage/internal-db.js';
import { until } from './wait.js';

/** Every file and folder under `root` (absolute paths), not descending into the folders of `skip`. */
export function fileTree(root: string, skip: readonly string[] = []): Set<string> {
  const found = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      found.add(path);
      if (entry.isDirectory() && !skip.includes(path)) walk(path);
    }
  };
  walk(root);
  return found;
}

/** Every file and folder under `root` (as fileTree) with its bytes (`folder` for a folder), to tell a folder unchanged. */
export function fileBytes(root: string, skip: readonly string[] = []): Map<string, string> {
  return new Map(
    [...fileTree(root, skip)]
      .sort()
      .map((path) => [path, statSync(path).isDirectory() ? 'folder' : readFileSync(path).toString('base64')]),
  );
}

/**
 * `fileBytes` once no temporary file is left under `root`: a write's answer may come before the
 * replaced file, kept under a temporary name, is freed (atomic-file.ts, `releaseLater`).
 */
export async function settledFileBytes(root: string, skip: readonly string[] = []): Promise<Map<string, string>> {
  const temporary = (): string[] => [...fileTree(root, skip)].filter((path) => isTemporaryFile(basename(path)));
  await until(
    () => `the temporary files ${temporary().join(', ')} to go`,
    () => temporary().length === 0,
  );
  return fileBytes(root, skip);
}

/** The paths of `after` that `before` did not have, and those of `before` that are gone. */
export function treeChanges(before: Set<string>, after: Set<string>): { added: string[]; removed: string[] } {
  return {
    added: [...after].filter((path) => !before.has(path)).sort(),
    removed: [...before].filter((path) => !after.has(path)).sort(),
  };
}

/**
 * What a write leaves behind when it stops half way: temporary files of atomic writes (and of the
 * calculator, named alike), journals of the internal database, staging folders of projects and of
 * cache folders being removed.
 */
export function leftovers(root: string): string[] {
  return [...fileTree(root)]
    .filter((path) => {
      const name = basename(path);
      return isTemporaryFile(name) || name === INTERNAL_DB_JOURNAL || /^\.(creating|deleting)-/.test(name);
    })
    .sort();
}
