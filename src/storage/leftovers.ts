import { link, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { isTemporaryFile } from './atomic-file.js';
import { INTERNAL_DB_JOURNAL, InternalDatabase } from './internal-db.js';
import { REPLACED_KIND } from './move-into-place.js';
import { type OwnedFile, ownedFile, ownerGone } from './owned-files.js';
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

/** An entry a stopped process left in a data folder, and the owned file (see owned-files.ts) it names, if any. */
interface Leftover {
  entry: string;
  owned: OwnedFile | undefined;
}

async function leftoversIn(dir: string): Promise<Leftover[]> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  return entries.flatMap((entry) => {
    const owned = ownedFile(entry);
    const left =
      isTemporaryFile(entry) || entry === INTERNAL_DB_JOURNAL || (owned !== undefined && ownerGone(owned.owner));
    return left ? [{ entry, owned }] : [];
  });
}

/**
 * A raster moved aside by a process killed before it moved the new one into its place: put back
 * when that place is still empty (the calculation's job is failed, so the old raster stands), and
 * removed otherwise. A link, which never replaces a file that appeared meanwhile.
 */
async function putBackReplaced(dir: string, entry: string, target: string): Promise<void> {
  await link(join(dir, entry), join(dir, target)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST' && error.code !== 'ENOENT') throw error;
  });
  await rm(join(dir, entry), { force: true });
}

async function clearLeftover(dir: string, { entry, owned }: Leftover): Promise<void> {
  if (entry === INTERNAL_DB_JOURNAL) InternalDatabase.recoverInterrupted(dir);
  else if (owned?.kind === REPLACED_KIND && !entry.endsWith('.aux.xml'))
    await putBackReplaced(dir, entry, owned.target);
  else await rm(join(dir, entry), { force: true });
}

/**
 * Clears what a Steward process killed in the middle of a write left in a project's data folder:
 * temporary files of atomic writes, the journal of an internal-database transaction (see
 * InternalDatabase.recoverInterrupted), and the calculator's files (its work file, the raster it
 * replaces) of a process that is gone. This is done holding the project's lock, so another live
 * Steward process on the same folder is never disturbed: it makes temporary files there only under
 * that lock, and has renamed or removed them before it lets go, so whatever is found then was
 * abandoned. The calculator does not take that lock (a calculation would hold up every write for
 * its whole run): its files name their owner, and are cleared only once that process is gone.
 * Returns how many leftovers were cleared.
 */
export async function clearDataDirLeftovers(store: ProjectStore, ref: ProjectRef): Promise<number> {
  const dir = store.dataDir(ref);
  if ((await leftoversIn(dir)).length === 0) return 0;
  return store.withLock(ref, async () => {
    const leftovers = await leftoversIn(dir);
    for (const leftover of leftovers) await clearLeftover(dir, leftover);
    return leftovers.length;
  });
}
