/**
 * The revision folders of a project's data in the upload root (`<root>/<project>/<revision>/`, one
 * per published bundle, docs/publishing.md). Once a publish has stored the project, the project's
 * earlier revisions that neither the stored project, nor any version its history keeps, nor a
 * style, nor another project names are removed: a restore of a kept version never finds its files gone, and a revision goes at the
 * first publish after history has forgotten the last version that read it. A project removed
 * takes its revisions with it, as it takes its history.
 */
import { randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { BadRequest } from '../errors.js';
import { removeIfEmpty } from '../storage/made-folders.js';
import { projectKey, type ProjectRef, type ProjectStore } from '../storage/project-store.js';
import { decodeEachOfChain } from '../storage/version-codec.js';
import { DEFAULT_SCHEMA } from './projects.js';

/** Revision folders: `20261205T130301Z-1a2b3c`, the upload's UTC time and a random suffix. */
const REVISION = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;

/** The length of a revision's time, `20261205T130301Z`. */
const STAMP = 16;

/** A new revision's name. */
export function newRevision(): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Takes the revisions `content` names out of `left`; whether none is left. */
function takeNamed(left: Set<string>, content: Uint8Array | string): boolean {
  const text =
    typeof content === 'string' ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  for (const revision of left) if (text.includes(revision)) left.delete(revision);
  return left.size === 0;
}

/** Whether the stored project or a version of its history names every revision of `left` (taken out as found): newest first, a chain at a time. */
async function namedByProject(store: ProjectStore, ref: ProjectRef, left: Set<string>): Promise<boolean> {
  const stored = await store.read(ref);
  if (stored && takeNamed(left, stored.content)) return true;
  const project = projectKey(ref);
  for (let id = (await store.versions.latest(ref))?.id; id !== undefined && id > 0;) {
    const chain = await store.versions.chain(ref, id);
    if (chain.length === 0) break;
    for (const content of decodeEachOfChain(project, chain)) if (takeNamed(left, content)) return true;
    id = (chain[0]?.id ?? 0) - 1;
  }
  return false;
}

/** Whether a style of `ref` names every revision of `left` (taken out as found). */
async function namedByStyles(store: ProjectStore, ref: ProjectRef, left: Set<string>): Promise<boolean> {
  for (const name of await store.styles.names(ref)) {
    const qml = await store.styles.read(ref, name);
    if (qml !== undefined && takeNamed(left, qml)) return true;
  }
  return false;
}

/**
 * Whether another stored project of `ref`'s schema or the default one, or a style of one, names
 * every revision of `left` (taken out as found): any project may read the upload root's files.
 */
async function namedElsewhere(store: ProjectStore, ref: ProjectRef, left: Set<string>): Promise<boolean> {
  for (const schema of new Set([ref.schema, DEFAULT_SCHEMA])) {
    for (const name of await store.list(schema)) {
      const other = { name, schema };
      if (name === ref.name && schema === ref.schema) continue;
      const stored = await store.read(other);
      if (stored && takeNamed(left, stored.content)) return true;
      if (await namedByStyles(store, other, left)) return true;
    }
  }
  return false;
}

/**
 * Of `revisions`, those that nothing names: neither the stored project, nor a version of its
 * history, nor its styles, nor another project or its styles.
 */
async function unnamed(store: ProjectStore, ref: ProjectRef, revisions: string[]): Promise<string[]> {
  const left = new Set(revisions);
  const named =
    (await namedByProject(store, ref, left)) ||
    (await namedByStyles(store, ref, left)) ||
    (await namedElsewhere(store, ref, left));
  return named ? [] : [...left];
}

/**
 * Removes the revision folders in `folder` (the project's folder of the upload root) made no later
 * than `current` (the revision just published, by its time to the second; undefined: all of them)
 * that nothing names (unnamed), then the folder itself if that leaves it empty; the revisions removed. Under
 * the project's lock, so that an upload storing its revision meanwhile either is named by the
 * stored project already or finds its revision gone as it stores it (and is refused).
 */
async function removeUnusedRevisions(
  store: ProjectStore,
  ref: ProjectRef,
  folder: string,
  current: string | undefined,
): Promise<string[]> {
  return store.withLock(ref, async () => {
    const entries = await readdir(folder).catch(() => [] as string[]);
    const earlier = entries.filter(
      (name) =>
        REVISION.test(name) &&
        name !== current &&
        (current === undefined || name.slice(0, STAMP) <= current.slice(0, STAMP)),
    );
    const unused = earlier.length === 0 ? [] : await unnamed(store, ref, earlier);
    for (const revision of unused) await rm(join(folder, revision), { recursive: true, force: true });
    if (unused.length > 0) await removeIfEmpty(folder);
    return unused;
  });
}

/** The projects' folders in the upload root (STEWARD_UPLOAD_ROOT, undefined when there is none). */
export class UploadFolders {
  constructor(
    private readonly store: ProjectStore,
    readonly root: string | undefined,
    /** Told when revisions could not be removed; they go at the project's next publish. */
    private readonly onCleanupFailed?: (ref: ProjectRef, error: unknown) => void,
  ) {}

  /** The folder of `ref`'s revisions, `<root>/<name>` (`<root>/<name>@<schema>` beyond public); BadRequest without an upload root. */
  folderOf(ref: ProjectRef): string {
    if (this.root === undefined) {
      throw new BadRequest(
        'this server takes no data files (STEWARD_UPLOAD_ROOT is not set): upload the project alone',
      );
    }
    return join(this.root, ref.schema === 'public' ? ref.name : `${ref.name}@${ref.schema}`);
  }

  /**
   * Removes `ref`'s revisions that nothing names, made no later than `current` (undefined: all):
   * once a publish is stored, or once the project is removed with its history.
   */
  async removeUnused(ref: ProjectRef, current: string | undefined): Promise<void> {
    if (this.root === undefined) return;
    await removeUnusedRevisions(this.store, ref, this.folderOf(ref), current).catch((error: unknown) =>
      this.onCleanupFailed?.(ref, error),
    );
  }

  /** A project removed: its revisions go, as nothing of its own reads them any more. */
  async projectRemoved(ref: ProjectRef): Promise<void> {
    await this.removeUnused(ref, undefined);
  }
}
