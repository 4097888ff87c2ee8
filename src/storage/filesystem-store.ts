import { randomUUID } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { Conflict, ServiceUnavailable } from '../errors.js';
import { stageFile, writeFileAtomic } from './atomic-file.js';
import { onFullDisk } from './disk-space.js';
import { fileStats, fileVersion, folderVersion } from './file-version.js';
import { FilesystemStyles } from './filesystem-styles.js';
import { InternalDatabase } from './internal-db.js';
import { clearDataDirLeftovers, clearInto } from './leftovers.js';
import { KeyedMutex, withFileLock } from './lock.js';
import { ProjectArchive } from './project-archive.js';
import { journalPaths, ProjectJournal, recoverJournal } from './project-journal.js';
import {
  type LeftoverReport,
  type ProjectContent,
  type ProjectRef,
  type ProjectStore,
  type StoredProject,
  wholeContent,
} from './project-store.js';
import { HISTORY_FILE, SqliteVersions } from './sqlite-versions.js';
import { type StyleChange } from './style-store.js';

const PROJECT_EXTENSIONS = ['.qgs', '.qgz'] as const;

function isProjectFile(entry: string): boolean {
  return PROJECT_EXTENSIONS.some((extension) => entry.endsWith(extension));
}

/** The empty file in a project's folder that pins it: it goes wherever the folder goes. */
const PIN_FILE = 'steward-pinned';

/**
 * Hidden folders a project passes through while it is created or removed. They are named after the
 * project, so only the holder of its lock touches them, and one left by a killed process is known.
 */
const STAGING_PREFIXES = ['.creating-', '.deleting-'] as const;
type StagingPrefix = (typeof STAGING_PREFIXES)[number];

/**
 * The modification time (seconds) of a project's next version: now, or just after the current
 * version's when the clock has not passed it. Each write under the project's lock then changes the
 * file's identity, even a write of equal size, on a reused inode, within one timestamp tick of the
 * file system, so that a parse cached by one process is never taken for another process's write.
 */
function nextModified(currentNs: bigint | undefined): number {
  const nowNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
  // 10 µs apart: well beyond the rounding of a time given in seconds as a double (about 0.24 µs).
  const next = currentNs !== undefined && currentNs + 10_000n > nowNs ? currentNs + 10_000n : nowNs;
  return Number(next) / 1e9;
}

/**
 * How long a listing is reused while the projects folder itself is unchanged. Creating and removing
 * a project renames a folder there, which changes it at once; a project file removed from its
 * folder by hand is only seen when the listing is this old.
 */
const LISTING_MAX_AGE_MS = 5_000;

/** The projects whose journal this process keeps writing to; another project's next write starts one anew. */
const MAX_OPEN_JOURNALS = 64;

interface Listing {
  /** The projects folder's version when it was listed. */
  version: string;
  at: number;
  names: string[];
  /** Entries that held no project file: a folder copied in is made before the files in it. */
  others: string[];
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Removes a folder tree; returns 1 when it was there, 0 when not. */
async function removeFolder(path: string): Promise<number> {
  try {
    await access(path);
  } catch {
    return 0;
  }
  await rm(path, { recursive: true, force: true });
  return 1;
}

/**
 * Projects as folders of the projects directory: `<dir>/<name>/<name>.qgs` (or `.qgz`, as QGIS
 * saves them), with the internal database and styles beside the project file.
 */
/**
 * Records the write in the journal while the new file is written beside the old one, and puts the
 * new file in place once the record is on the disk: the file is written during the journal's flush
 * rather than after it, and a crash before the rename leaves the old file, which the record (when
 * flushed) brings up to date. The record's delta is made once the file's bytes are on their way,
 * and `whileWriting` called after it.
 */
async function recordAndReplace(
  journal: ProjectJournal,
  path: string,
  pieces: readonly Uint8Array[],
  modified: number,
  whileWriting?: () => void,
): Promise<void> {
  let recording: Promise<[PromiseSettledResult<() => Promise<void>>]> | undefined;
  const record = () => (recording ??= Promise.allSettled([journal.record(pieces, modified)]));
  const staging = stageFile(path, pieces, {
    modified,
    releaseLater: true,
    flush: false,
    whileWriting: () => {
      void record();
      whileWriting?.();
    },
  });
  const [staged] = await Promise.allSettled([staging]);
  if (staged.status === 'rejected') {
    const [recorded] = (await recording) ?? [];
    if (recorded?.status === 'fulfilled') await recorded.value();
    throw staged.reason;
  }
  const [recorded] = await record();
  if (recorded.status === 'rejected') {
    await staged.value.discard();
    throw recorded.reason;
  }
  try {
    await staged.value.commit();
  } catch (error) {
    await recorded.value();
    throw error;
  }
}

export class FilesystemStore implements ProjectStore {
  readonly kind = 'filesystem' as const;
  readonly styles = new FilesystemStyles((ref) => this.dataDir(ref));
  readonly versions: SqliteVersions;
  private readonly mutex = new KeyedMutex();
  private listing: Listing | undefined;
  /** By project name, the least recently written first. */
  private readonly journals = new Map<string, ProjectJournal>();
  /** Projects whose journal could not be settled at start-up, by name: why. */
  private readonly unsettled = new Map<string, string>();

  constructor(private readonly projectsDir: string) {
    this.versions = new SqliteVersions(join(projectsDir, HISTORY_FILE));
  }

  /** Closes the history file; a later use opens it again. */
  close(): void {
    this.versions.close();
  }

  dataDir(ref: ProjectRef): string {
    return join(this.projectsDir, ref.name);
  }

  private newProjectPath(ref: ProjectRef): string {
    return join(this.dataDir(ref), `${ref.name}.qgs`);
  }

  /** The .qgs (or .qgz, for a project saved by QGIS) that QGIS Server opens. */
  async mapParameter(ref: ProjectRef): Promise<string> {
    return this.projectFile(ref)?.path ?? this.newProjectPath(ref);
  }

  /** The project file that exists, .qgs first; undefined when neither does. */
  private projectFile(ref: ProjectRef): { path: string; identity: string } | undefined {
    for (const extension of PROJECT_EXTENSIONS) {
      const path = join(this.dataDir(ref), ref.name + extension);
      const identity = fileVersion(path);
      if (identity) return { path, identity };
    }
    return undefined;
  }

  private stagingDir(prefix: StagingPrefix, ref: ProjectRef): string {
    return join(this.projectsDir, prefix + ref.name);
  }

  private async entries(): Promise<string[]> {
    try {
      return await readdir(this.projectsDir);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }

  /** Writes and removes a hidden file, which `list` skips like every dot entry. */
  async probe(): Promise<void> {
    const file = join(this.projectsDir, `.probe-${randomUUID()}`);
    await writeFile(file, '');
    await rm(file, { force: true });
  }

  /**
   * The projects, by name. Each needs a look at its folder (thousands of them take tens of
   * milliseconds), so a listing is reused while the projects folder is unchanged, for at most
   * LISTING_MAX_AGE_MS, once the entries that held no project have been looked at again.
   */
  async list(): Promise<string[]> {
    const version = folderVersion(this.projectsDir);
    const kept = this.listing;
    const fresh = kept !== undefined && kept.version === version && Date.now() - kept.at < LISTING_MAX_AGE_MS;
    if (fresh && !kept.others.some((entry) => this.holdsProject(entry))) return [...kept.names];
    const listing: Listing = { version: version ?? '', at: Date.now(), names: [], others: [] };
    for (const entry of (await this.entries()).filter((name) => !name.startsWith('.')).sort()) {
      (this.holdsProject(entry) ? listing.names : listing.others).push(entry);
    }
    this.listing = version === undefined ? undefined : listing;
    return [...listing.names];
  }

  private holdsProject(entry: string): boolean {
    return this.projectFile({ name: entry, schema: 'public' }) !== undefined;
  }

  async identity(ref: ProjectRef): Promise<string | undefined> {
    this.refuseUnsettled(ref);
    return this.identityNow(ref);
  }

  identityNow(ref: ProjectRef): string | undefined {
    return this.projectFile(ref)?.identity;
  }

  async strayFiles(ref: ProjectRef): Promise<string[]> {
    const besides = (await this.entries()).filter(
      (entry) => isProjectFile(entry) && entry.slice(0, entry.lastIndexOf('.')) === ref.name,
    );
    return [...besides, ...(await this.projectFilesIn(ref.name))].sort();
  }

  async unlistedFiles(): Promise<string[]> {
    const unlisted: string[] = [];
    for (const entry of (await this.entries()).filter((name) => !name.startsWith('.')).sort()) {
      if (isProjectFile(entry)) unlisted.push(entry);
      else if (!this.holdsProject(entry)) unlisted.push(...(await this.projectFilesIn(entry)));
    }
    return unlisted;
  }

  /** The project files of a folder of the projects folder, by their path in it; none when it is no folder. */
  private async projectFilesIn(folder: string): Promise<string[]> {
    const inside = await readdir(join(this.projectsDir, folder)).catch(() => [] as string[]);
    return inside
      .filter(isProjectFile)
      .map((entry) => join(folder, entry))
      .sort();
  }

  async read(ref: ProjectRef): Promise<StoredProject | undefined> {
    this.refuseUnsettled(ref);
    const file = this.projectFile(ref);
    if (!file) return undefined;
    const bytes = await readFile(file.path);
    const content = file.path.endsWith('.qgz') ? ProjectArchive.open(bytes).content : bytes;
    return { content, identity: file.identity };
  }

  async create(ref: ProjectRef, text: string): Promise<void> {
    await mkdir(this.projectsDir, { recursive: true });
    if (this.projectFile(ref)) throw new Conflict(`project "${ref.name}" already exists`, { code: 'name_taken' });
    // Built in a hidden folder and renamed into place, so a project appears whole or not at all.
    const staging = this.stagingDir('.creating-', ref);
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging);
    try {
      await writeFileAtomic(join(staging, `${ref.name}.qgs`), text);
      InternalDatabase.ensure(staging);
      await rename(staging, this.dataDir(ref));
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') throw await this.taken(ref);
      throw error;
    }
  }

  /** The Conflict for a project whose folder exists: the project, or a folder without its file. */
  private async taken(ref: ProjectRef): Promise<Conflict> {
    if (this.projectFile(ref)) return new Conflict(`project "${ref.name}" already exists`, { code: 'name_taken' });
    const files = await this.projectFilesIn(ref.name);
    const held = `the projects folder has a folder "${ref.name}" already, without ${ref.name}.qgs or ${ref.name}.qgz`;
    if (files.length === 0) return new Conflict(`${held}: move it away to create the project`, { code: 'name_taken' });
    return new Conflict(
      `${held}, and ${files.join(', ')} in it: rename one ${ref.name}/${ref.name} with its extension (.qgs or .qgz) to serve it as the project`,
      { code: 'name_taken' },
    );
  }

  /**
   * Stored styles are written before the project, removed ones after it: a write cut short leaves
   * the style listed while its layers hold the copy of before, never layers holding an unlisted one.
   */
  async write(
    ref: ProjectRef,
    content: ProjectContent,
    styles: readonly StyleChange[] = [],
    whileWriting?: () => void,
  ): Promise<string> {
    this.refuseUnsettled(ref);
    const stored = styles.filter((style) => style.qml !== undefined);
    const removed = styles.filter((style) => style.qml === undefined);
    await this.styles.apply(ref, stored);
    const identity = await this.writeProject(ref, content, whileWriting);
    await this.styles.apply(ref, removed);
    return identity;
  }

  private async writeProject(ref: ProjectRef, content: ProjectContent, whileWriting?: () => void): Promise<string> {
    const file = this.projectFile(ref);
    const path = file?.path ?? this.newProjectPath(ref);
    const modified = nextModified(fileStats(path)?.mtimeNs);
    if (path.endsWith('.qgz')) {
      // Other archive members (the auxiliary storage database) are kept as they were.
      const archive = ProjectArchive.open(await readFile(path));
      archive.content = wholeContent(content);
      await writeFileAtomic(path, await archive.bytes(), { modified, releaseLater: true, whileWriting });
    } else {
      const pieces = content instanceof Uint8Array ? [content] : content;
      await this.writeProjectFile(ref.name, path, pieces, modified, whileWriting);
    }
    const written = this.projectFile(ref);
    if (!written) throw new Error(`project "${ref.name}" vanished while being written`);
    return written.identity;
  }

  /**
   * Replaces a .qgs: recorded in its journal and replaced without waiting for the disk while the
   * journal takes records; otherwise written and flushed whole, which starts a new journal.
   */
  private async writeProjectFile(
    name: string,
    path: string,
    pieces: readonly Uint8Array[],
    modified: number,
    whileWriting?: () => void,
  ) {
    const journal = this.journals.get(name);
    this.journals.delete(name);
    if (journal?.accepts()) {
      await recordAndReplace(journal, path, pieces, modified, whileWriting);
      this.keepJournal(name, journal);
      return;
    }
    await writeFileAtomic(path, pieces, { modified, releaseLater: true, whileWriting });
    // The write is done and durable: a journal that cannot start leaves the next write whole too.
    const started = await ProjectJournal.begin(path, pieces).catch(() => undefined);
    if (started) this.keepJournal(name, started);
  }

  private keepJournal(name: string, journal: ProjectJournal): void {
    this.journals.set(name, journal);
    const oldest = this.journals.keys().next().value;
    if (this.journals.size > MAX_OPEN_JOURNALS && oldest !== undefined) this.journals.delete(oldest);
  }

  async remove(ref: ProjectRef): Promise<boolean> {
    this.journals.delete(ref.name);
    if (!this.projectFile(ref)) return false;
    const doomed = this.stagingDir('.deleting-', ref);
    await rm(doomed, { recursive: true, force: true });
    await rename(this.dataDir(ref), doomed);
    this.unsettled.delete(ref.name);
    await this.versions.forget(ref);
    await rm(doomed, { recursive: true, force: true });
    return true;
  }

  async pinned(): Promise<ProjectRef[]> {
    const names = await this.list();
    return names.filter((name) => this.hasPin(name)).map((name) => ({ name, schema: 'public' }));
  }

  async isPinned(ref: ProjectRef): Promise<boolean> {
    return this.hasPin(ref.name);
  }

  async setPinned(ref: ProjectRef, pinned: boolean): Promise<void> {
    if (pinned) await writeFileAtomic(this.pinFile(ref.name), '');
    else await rm(this.pinFile(ref.name), { force: true });
  }

  private hasPin(name: string): boolean {
    return fileStats(this.pinFile(name)) !== undefined;
  }

  private pinFile(name: string): string {
    return join(this.dataDir({ name, schema: 'public' }), PIN_FILE);
  }

  withLock<T>(ref: ProjectRef, work: () => Promise<T>): Promise<T> {
    const lockPath = join(this.projectsDir, '.locks', `${ref.name}.lock`);
    return this.mutex.run(ref.name, () => onFullDisk(this.projectsDir, () => withFileLock(lockPath, work)));
  }

  /**
   * Clears what a process killed in the middle of a write left behind: staging folders of projects
   * being created or removed (each under its project's lock) and leftovers in project folders. A
   * project whose journal cannot be settled is left as it is on disk, and refused until it is.
   */
  async clearLeftovers(): Promise<LeftoverReport> {
    const report: LeftoverReport = { cleared: 0, failures: [] };
    for (const entry of await this.entries()) {
      const prefix = STAGING_PREFIXES.find((candidate) => entry.startsWith(candidate));
      const ref = { name: prefix ? entry.slice(prefix.length) : entry, schema: 'public' };
      if (prefix)
        await clearInto(report, ref, () => this.withLock(ref, () => removeFolder(this.stagingDir(prefix, ref))));
      else if (!entry.startsWith('.')) {
        await clearInto(report, ref, () => clearDataDirLeftovers(this, ref));
        const reason = await clearInto(report, ref, () => this.recover(ref), { refused: true });
        if (reason !== undefined) this.unsettled.set(ref.name, reason);
      }
    }
    return report;
  }

  private hasJournal(ref: ProjectRef): boolean {
    const { checkpoint, journal } = journalPaths(this.newProjectPath(ref));
    return fileStats(journal) !== undefined || fileStats(checkpoint) !== undefined;
  }

  /** Settles a journal left by a process that stopped: the project file gets its last write back if lost. */
  private async recover(ref: ProjectRef): Promise<number> {
    if (!this.hasJournal(ref)) return 0;
    this.journals.delete(ref.name);
    return (await this.withLock(ref, () => recoverJournal(this.newProjectPath(ref)))) ? 1 : 0;
  }

  /**
   * Refuses a project whose journal could not be settled: its file may lack writes that only the
   * journal holds, which a read would miss and a write would lose for good. Once the journal and
   * its checkpoint are gone (settled by another process, or put right by hand), it is served again.
   */
  private refuseUnsettled(ref: ProjectRef): void {
    const reason = this.unsettled.get(ref.name);
    if (reason === undefined) return;
    if (!this.hasJournal(ref)) {
      this.unsettled.delete(ref.name);
      return;
    }
    throw new ServiceUnavailable(
      `project "${ref.name}" is refused: its journal could not be settled at start-up (${reason})`,
      {
        clientMessage: `project "${ref.name}" is unavailable: its journal could not be settled at start-up, and it is kept as it is on disk until an operator settles it`,
      },
    );
  }
}
