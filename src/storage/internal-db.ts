import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { type Geometry } from '../qgis/geometry.js';
import { defaultStyles } from './style-store.js';

export const INTERNAL_DB_NAME = 'steward.db';
/** The rollback journal SQLite keeps beside the database while a transaction is under way. */
export const INTERNAL_DB_JOURNAL = `${INTERNAL_DB_NAME}-journal`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS default_styles (
  geometry TEXT PRIMARY KEY CHECK (geometry IN ('point', 'line', 'polygon')),
  style TEXT NOT NULL
);
INSERT OR IGNORE INTO default_styles (geometry, style) VALUES ('point', 'default'), ('line', 'default'), ('polygon', 'default');
`;

/**
 * The project's internal SQLite database (`steward.db` in the project's data folder), created on
 * first use with the default style of each geometry set to `default`.
 */
export class InternalDatabase {
  private constructor(private readonly db: Database.Database) {}

  static open(dataDir: string): InternalDatabase {
    mkdirSync(dataDir, { recursive: true });
    const db = new Database(join(dataDir, INTERNAL_DB_NAME));
    db.pragma('journal_mode = DELETE');
    db.pragma('busy_timeout = 5000');
    db.exec(SCHEMA);
    return new InternalDatabase(db);
  }

  /** Creates the database (and its folder) if it is not there yet. */
  static ensure(dataDir: string): void {
    InternalDatabase.use(dataDir, () => undefined);
  }

  /**
   * Clears the journal of a transaction that a killed process left half done. Opening the database
   * makes SQLite roll back a hot journal (one whose changes reached the database) and delete it;
   * a journal still there once the write lock is held was never used, and is removed. A journal
   * must not be deleted before: it may hold the pages that undo a half-done change.
   * Returns whether there was a journal.
   */
  static recoverInterrupted(dataDir: string): boolean {
    const journal = join(dataDir, INTERNAL_DB_JOURNAL);
    if (!existsSync(journal)) return false;
    InternalDatabase.use(dataDir, ({ db }) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        rmSync(journal, { force: true });
      } finally {
        db.exec('ROLLBACK');
      }
    });
    return true;
  }

  /** Opens the database, runs `work` and closes it again. */
  static use<T>(dataDir: string, work: (db: InternalDatabase) => T): T {
    const database = InternalDatabase.open(dataDir);
    try {
      return work(database);
    } finally {
      database.db.close();
    }
  }

  defaultStyles(): Record<Geometry, string> {
    const rows = this.db
      .prepare<[], { geometry: Geometry; style: string }>('SELECT geometry, style FROM default_styles')
      .all();
    return defaultStyles(rows);
  }

  setDefaultStyle(geometry: Geometry, style: string): void {
    this.db.prepare('INSERT OR REPLACE INTO default_styles (geometry, style) VALUES (?, ?)').run(geometry, style);
  }
}
