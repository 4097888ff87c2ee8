import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const GEOMETRIES = ['point', 'line', 'polygon'] as const;
export type Geometry = (typeof GEOMETRIES)[number];

export const INTERNAL_DB_NAME = 'steward.db';

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
    const rows = this.db.prepare<[], { geometry: Geometry; style: string }>('SELECT geometry, style FROM default_styles').all();
    const styles = { point: 'default', line: 'default', polygon: 'default' };
    for (const row of rows) styles[row.geometry] = row.style;
    return styles;
  }

  setDefaultStyle(geometry: Geometry, style: string): void {
    this.db.prepare('INSERT OR REPLACE INTO default_styles (geometry, style) VALUES (?, ?)').run(geometry, style);
  }
}
