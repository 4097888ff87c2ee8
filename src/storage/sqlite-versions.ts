import Database from 'better-sqlite3';

import { type ProjectRef } from './project-ref.js';
import {
  type NewVersion,
  type Retention,
  type VersionContent,
  type VersionFacts,
  type VersionStore,
} from './version-store.js';

/** The file beside the projects' folders that holds their versions. */
export const HISTORY_FILE = '.steward-history.db';

/** How long a write waits for another process's on the same file, blocking: a version is a single short insert. */
const BUSY_TIMEOUT_MS = 5_000;

const FACTS = 'id, time, who, route, summary';

interface ContentRow {
  id: number;
  identity: string;
  keyframe: number;
  payload: Buffer;
  layers: Buffer | null;
}

/**
 * Gives a file made before versions kept their layers the column for them: its rows keep none,
 * and restoring one of them reads its layers out of its file. Immediate, as another process may
 * open the file at once.
 */
function addLayersColumn(db: Database.Database): void {
  const columns = () => db.pragma('table_info(versions)') as Array<{ name: string }>;
  db.transaction(() => {
    if (!columns().some((column) => column.name === 'layers')) db.exec('ALTER TABLE versions ADD COLUMN layers BLOB');
  }).immediate();
}

/**
 * The versions of the projects of a folder, in one SQLite file: written on the event loop, as each
 * is one insert of a few kilobytes (a keyframe, compressed, now and then), in WAL mode so that
 * readers and other processes on the folder go on meanwhile.
 */
export class SqliteVersions implements VersionStore {
  private opened: Database.Database | undefined;
  /** Statements by their SQL, prepared once: preparing costs more than running a version's insert. */
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly path: string) {}

  private get db(): Database.Database {
    if (this.opened) return this.opened;
    const db = new Database(this.path, { timeout: BUSY_TIMEOUT_MS });
    db.pragma('journal_mode = WAL');
    // A version lost to a power cut is one the project file's own journal gives back: see docs/history.md.
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE IF NOT EXISTS versions (
      project TEXT NOT NULL, id INTEGER NOT NULL, time TEXT NOT NULL, who TEXT NOT NULL, route TEXT NOT NULL,
      summary TEXT NOT NULL, identity TEXT NOT NULL, keyframe INTEGER NOT NULL, payload BLOB NOT NULL, styles BLOB,
      layers BLOB, PRIMARY KEY (project, id));
      CREATE TABLE IF NOT EXISTS files (project TEXT NOT NULL, path TEXT NOT NULL, bytes BLOB NOT NULL,
      PRIMARY KEY (project, path))`);
    addLayersColumn(db);
    this.opened = db;
    return db;
  }

  close(): void {
    this.statements.clear();
    this.opened?.close();
    this.opened = undefined;
  }

  private prepare<Params extends unknown[] | object, Row>(sql: string): Database.Statement<Params, Row> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as Database.Statement<Params, Row>;
  }

  async latest(ref: ProjectRef): Promise<{ id: number; identity: string } | undefined> {
    return this.prepare<[string], { id: number; identity: string }>(
      'SELECT id, identity FROM versions WHERE project = ? ORDER BY id DESC LIMIT 1',
    ).get(ref.name);
  }

  async append(ref: ProjectRef, version: NewVersion): Promise<number> {
    const row = this.prepare<[Record<string, unknown>], { id: number }>(
      `INSERT INTO versions (project, id, time, who, route, summary, identity, keyframe, payload, styles, layers)
         SELECT :project, coalesce(max(id), 0) + 1, :time, :who, :route, :summary, :identity, :keyframe, :payload,
           :styles, :layers FROM versions WHERE project = :project RETURNING id`,
    ).get({
      ...version,
      project: ref.name,
      keyframe: version.keyframe ? 1 : 0,
      styles: version.styles ?? null,
      layers: version.layers ?? null,
    });
    return (row as { id: number }).id;
  }

  async list(ref: ProjectRef, before: number | undefined, limit: number): Promise<VersionFacts[]> {
    return this.prepare<[string, number, number], VersionFacts>(
      `SELECT ${FACTS} FROM versions WHERE project = ? AND id < ? ORDER BY id DESC LIMIT ?`,
    ).all(ref.name, before ?? Number.MAX_SAFE_INTEGER, limit);
  }

  async facts(ref: ProjectRef, id: number): Promise<VersionFacts | undefined> {
    return this.prepare<[string, number], VersionFacts>(
      `SELECT ${FACTS} FROM versions WHERE project = ? AND id = ?`,
    ).get(ref.name, id);
  }

  async identityOf(ref: ProjectRef, id: number): Promise<string | undefined> {
    return this.prepare<[string, number], { identity: string }>(
      'SELECT identity FROM versions WHERE project = ? AND id = ?',
    ).get(ref.name, id)?.identity;
  }

  async chain(ref: ProjectRef, id: number): Promise<VersionContent[]> {
    const rows = this.prepare<[string, number, string, number], ContentRow>(
      `SELECT id, identity, keyframe, payload, layers FROM versions WHERE project = ? AND id <= ? AND id >= (
           SELECT max(id) FROM versions WHERE project = ? AND keyframe = 1 AND id <= ?) ORDER BY id`,
    ).all(ref.name, id, ref.name, id);
    if (rows.at(-1)?.id !== id) return [];
    return rows.map((row) => ({ ...row, keyframe: row.keyframe === 1, layers: row.layers ?? undefined }));
  }

  async styles(ref: ProjectRef, id: number): Promise<Buffer | undefined> {
    return this.prepare<[string, number], { styles: Buffer }>(
      'SELECT styles FROM versions WHERE project = ? AND id <= ? AND styles IS NOT NULL ORDER BY id DESC LIMIT 1',
    ).get(ref.name, id)?.styles;
  }

  async prune(ref: ProjectRef, retention: Retention): Promise<number> {
    const { changes } = this.prepare(
      `DELETE FROM versions WHERE project = :project AND id < (
           SELECT max(id) FROM versions WHERE project = :project AND keyframe = 1 AND id <= (
             SELECT min(max(
               coalesce((SELECT id FROM versions WHERE project = :project ORDER BY id DESC LIMIT 1 OFFSET :offset), 0),
               coalesce((SELECT min(id) FROM versions WHERE project = :project AND time >= :since), 1e18)),
               (SELECT max(id) FROM versions WHERE project = :project))))`,
    ).run({ project: ref.name, offset: retention.versions - 1, since: retention.since.toISOString() });
    return changes;
  }

  async forget(ref: ProjectRef): Promise<void> {
    this.prepare<[string], unknown>('DELETE FROM versions WHERE project = ?').run(ref.name);
    this.prepare<[string], unknown>('DELETE FROM files WHERE project = ?').run(ref.name);
  }

  async keepFile(ref: ProjectRef, path: string, bytes: Buffer): Promise<void> {
    this.prepare<[string, string, Buffer], unknown>(
      'INSERT OR REPLACE INTO files (project, path, bytes) VALUES (?, ?, ?)',
    ).run(ref.name, path, bytes);
  }

  async keptFiles(ref: ProjectRef): Promise<string[]> {
    return this.prepare<[string], { path: string }>('SELECT path FROM files WHERE project = ?')
      .all(ref.name)
      .map((row) => row.path);
  }

  async keptFile(ref: ProjectRef, path: string): Promise<Buffer | undefined> {
    return this.prepare<[string, string], { bytes: Buffer }>(
      'SELECT bytes FROM files WHERE project = ? AND path = ?',
    ).get(ref.name, path)?.bytes;
  }
}
