// The layouts of both stores, their locks and leftovers: docs/storage.md.
import { type ProjectRef } from './project-ref.js';
import { type StyleChange, type StyleStore } from './style-store.js';
import { type VersionStore } from './version-store.js';

export type { ProjectRef } from './project-ref.js';

/** A project's key in per-project maps and queues: schema and name cannot contain NUL. */
export function projectKey(ref: ProjectRef): string {
  return `${ref.schema}\u0000${ref.name}`;
}

export interface StoredProject {
  /** The project XML in UTF-8 (.qgs content, unzipped when stored as .qgz). */
  content: Uint8Array;
  /** Changes whenever the stored project changes; used to cache parsed projects. */
  identity: string;
}

/** A project's XML in UTF-8: whole, or in pieces that follow one another. */
export type ProjectContent = Uint8Array | readonly Uint8Array[];

/** The content in one piece. */
export function wholeContent(content: ProjectContent): Uint8Array {
  return content instanceof Uint8Array ? content : Buffer.concat(content);
}

/** How many bytes the content holds, whole or in pieces. */
export function contentBytes(content: ProjectContent): number {
  return content instanceof Uint8Array ? content.byteLength : content.reduce((sum, piece) => sum + piece.byteLength, 0);
}

/** The project XML of a stored project. */
export function storedText(stored: StoredProject): string {
  return Buffer.from(stored.content.buffer, stored.content.byteOffset, stored.content.byteLength).toString('utf8');
}

/** A project whose leftovers could not be cleared, and why. */
export interface LeftoverFailure {
  project: ProjectRef;
  reason: string;
  /** Its journal could not be settled: its reads and writes are refused until it is (docs/storage.md). */
  refused: boolean;
}

/** What clearing leftovers did: how many it cleared, and the projects where it failed. */
export interface LeftoverReport {
  cleared: number;
  failures: LeftoverFailure[];
}

/** Storage of QGIS projects: a folder of .qgs/.qgz files, or QGIS's `qgis_projects` table. */
export interface ProjectStore {
  readonly kind: 'filesystem' | 'postgresql';
  list(schema: string): Promise<string[]>;
  /** The identity of the stored project, or undefined when there is none. */
  identity(ref: ProjectRef): Promise<string | undefined>;
  /**
   * The same, for stores that can tell it at once (a file's stat): a read of a cached project then
   * waits for no promise. PostgreSQL asks its database and has none.
   */
  identityNow?(ref: ProjectRef): string | undefined;
  read(ref: ProjectRef): Promise<StoredProject | undefined>;
  /**
   * Project files of that name the store holds outside the layout it serves projects from (a
   * `.qgs` beside the project folders, or of another name in the project's folder), for an answer
   * that says why the project is not there; empty when there are none.
   */
  strayFiles?(ref: ProjectRef): Promise<string[]>;
  /**
   * Every project file the store holds outside that layout and serves under no name, by its path
   * in the store (a `.qgs` beside the project folders, those of a folder without its own); the
   * other project files of a served project's folder are its own (copies, backups) and not told.
   */
  unlistedFiles?(): Promise<string[]>;
  /** Stores a new project; throws Conflict when the name is taken. */
  create(ref: ProjectRef, text: string): Promise<void>;
  /**
   * Replaces the project atomically with `content` (its XML in UTF-8) and returns its new identity;
   * `styles` are stored and removed with it, in the same transaction where the store has them.
   * `whileWriting` is called once the content is on its way (unless the write fails first): work to do meanwhile.
   */
  write(
    ref: ProjectRef,
    content: ProjectContent,
    styles?: readonly StyleChange[],
    whileWriting?: () => void,
  ): Promise<string>;
  /** Removes the project, its styles, its versions and its data folder; false when there was none. */
  remove(ref: ProjectRef): Promise<boolean>;
  /** Runs `work` holding the project's write lock, across processes too. */
  withLock<T>(ref: ProjectRef, work: () => Promise<T>): Promise<T>;
  /** The value of QGIS Server's MAP parameter for this project. */
  mapParameter(ref: ProjectRef): Promise<string>;
  /** The folder of the project's own files: its internal database and styles on the filesystem. */
  dataDir(ref: ProjectRef): string;
  /** The project's styles, kept where the project is. */
  readonly styles: StyleStore;
  /** The project's versions, kept where the project is and removed with it. */
  readonly versions: VersionStore;
  /**
   * Clears what a Steward process killed in the middle of a write left behind (temporary files,
   * interrupted transactions), without disturbing live processes. A project whose leftovers cannot
   * be cleared is reported and left as it is; the others are cleared all the same.
   */
  clearLeftovers(): Promise<LeftoverReport>;
  /** Throws when projects cannot be stored now: the folder is not writable, the database not reachable. */
  probe(): Promise<void>;
  /**
   * The pinned projects of every schema, by schema then name. A pin is kept with its project:
   * removing the project removes it, renaming the project (outside Steward) carries it along.
   */
  pinned(): Promise<ProjectRef[]>;
  isPinned(ref: ProjectRef): Promise<boolean>;
  /** Pins or unpins a stored project; the caller holds its lock and has made sure it exists. */
  setPinned(ref: ProjectRef, pinned: boolean): Promise<void>;
}
