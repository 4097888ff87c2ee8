// The layouts of the version stores: docs/history.md.
import { type ProjectRef } from './project-ref.js';

/** What is told of a version: when, by whom, through which route, and what it changed. */
export interface VersionFacts {
  id: number;
  /** ISO 8601, UTC. */
  time: string;
  who: string;
  route: string;
  summary: string;
}

/** A version to store: its facts, and its content as a keyframe (whole) or a delta against the version before. */
export interface NewVersion extends Omit<VersionFacts, 'id'> {
  /** The project's identity in its store once written as this version: a later identity means a change outside Steward. */
  identity: string;
  keyframe: boolean;
  payload: Buffer;
  /** The project's styles as of this version, when they changed; every keyframe has them. */
  styles: Buffer | undefined;
  /** The project's layers as of this version (version-layers.ts), when its write knew them. */
  layers: Buffer | undefined;
}

/** A stored version's content, as `NewVersion` gave it. */
export interface VersionContent {
  id: number;
  /** The project's identity as the version wrote it. */
  identity: string;
  keyframe: boolean;
  payload: Buffer;
  /** As `NewVersion` gave them; undefined for versions stored before layers were kept. */
  layers: Buffer | undefined;
}

/** How many versions are kept, and for how long; the newest is always kept. */
export interface Retention {
  versions: number;
  since: Date;
}

/**
 * The versions of projects, kept where the projects are: a SQLite file in the projects folder, or
 * a table beside the projects in PostgreSQL. Versions of a project are appended holding its lock.
 */
export interface VersionStore {
  /** The newest version's id and identity; undefined when the project has none. */
  latest(ref: ProjectRef): Promise<{ id: number; identity: string } | undefined>;
  /** Stores the project's next version and answers its id. */
  append(ref: ProjectRef, version: NewVersion): Promise<number>;
  /** The facts of up to `limit` versions older than `before` (or the newest), newest first. */
  list(ref: ProjectRef, before: number | undefined, limit: number): Promise<VersionFacts[]>;
  facts(ref: ProjectRef, id: number): Promise<VersionFacts | undefined>;
  /** The project's identity as version `id` wrote it (NewVersion.identity); undefined when there is no version `id`. */
  identityOf(ref: ProjectRef, id: number): Promise<string | undefined>;
  /** The content of the versions from the keyframe at or before `id` up to `id`, oldest first; empty when there is no version `id`. */
  chain(ref: ProjectRef, id: number): Promise<VersionContent[]>;
  /** The styles of the latest version at or before `id` that has them. */
  styles(ref: ProjectRef, id: number): Promise<Buffer | undefined>;
  /**
   * Removes the versions beyond `retention`, a keyframe and the deltas that follow it together:
   * versions a kept one is built from stay. Answers how many it removed.
   */
  prune(ref: ProjectRef, retention: Retention): Promise<number>;
  /** Removes every version of the project, and the files kept for them. */
  forget(ref: ProjectRef): Promise<void>;
  /**
   * Keeps a file of the project's folder that versions may name (a style package's image, named
   * by its content) as it is removed from the folder; by its path relative to the folder. Stores
   * that keep such files in the styles themselves (PostgreSQL) have none.
   */
  keepFile?(ref: ProjectRef, path: string, bytes: Buffer): Promise<void>;
  /** A file kept by `keepFile`; undefined when there is none. */
  keptFile?(ref: ProjectRef, path: string): Promise<Buffer | undefined>;
  /** The paths of the files kept by `keepFile`. */
  keptFiles?(ref: ProjectRef): Promise<string[]>;
}
