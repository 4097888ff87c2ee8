import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { isTemporaryFile } from './atomic-file.js';
import { INTERNAL_DB_JOURNAL, InternalDatabase } from './internal-db.js';
import { type LeftoverReport, type ProjectRef, type ProjectStore } from './project-store.js';

/**
 * Runs one clearing of `project`'s leftovers and adds what it cleared to `report`; a failure is
 * reported instead, so that one project cannot stop the others' clearing (nor the start-up).
 * Returns the failure's reason, if any.
 */
export async function clearInto(
  report: LeftoverReport,
  project: ProjectRef,
  clear: () => Promise<number>,
  { refused = false } = {},
): Promise<string | undefined> {
  try {
    report.cleared += await clear();
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    report.failures.push({ project, reason, refused });
    return reason;
  }
}

async function leftoversIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  return entries.filter((entry) => isTemporaryFile(entry) || entry === INTERNAL_DB_JOURNAL);
}

/**
 * Clears what a Steward process killed in the middle of a write left in a project's data folder:
 * temporary files of atomic writes, and the journal of an internal-database transaction (see
 * InternalDatabase.recoverInterrupted). This is done holding the project's lock, so another live
 * Steward process on the same folder is never disturbed: it makes temporary files there only under
 * that lock, and has renamed or removed them before it lets go, so whatever is found then was
 * abandoned. Returns how many leftovers were cleared.
 */
export async function clearDataDirLeftovers(store: ProjectStore, ref: ProjectRef): Promise<number> {
  const dir = store.dataDir(ref);
  if ((await leftoversIn(dir)).length === 0) return 0;
  return store.withLock(ref, async () => {
    const leftovers = await leftoversIn(dir);
    for (const entry of leftovers) {
      if (entry === INTERNAL_DB_JOURNAL) InternalDatabase.recoverInterrupted(dir);
      else await rm(join(dir, entry), { force: true });
    }
    return leftovers.length;
  });
}
