import { type PostgresDatabase, type Query } from './pg-database.js';
import { ensureProjectTable, schemaTable, unlessMissing } from './pg-schema.js';
import { type ProjectRef } from './project-ref.js';
import {
  type NewVersion,
  type Retention,
  type VersionContent,
  type VersionFacts,
  type VersionStore,
} from './version-store.js';

/** The table beside `qgis_projects` that holds a schema's versions: every replica on the database sees them. */
export const VERSIONS_TABLE = 'steward_versions';

const COLUMNS = `id BIGINT NOT NULL, time TIMESTAMPTZ NOT NULL, who TEXT NOT NULL, route TEXT NOT NULL,
  summary TEXT NOT NULL, identity TEXT NOT NULL, keyframe BOOLEAN NOT NULL, payload BYTEA NOT NULL, styles BYTEA,
  layers BYTEA, PRIMARY KEY (project, id)`;

const FACTS = `id::float8 AS id, to_char(time AT TIME ZONE 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS time, who, route, summary`;

/**
 * The versions of a schema's projects, rows of `<schema>.steward_versions` that reference their
 * project: deleting it (through Steward, QGIS or SQL) deletes its versions, renaming it renames them.
 */
export class PostgresVersions implements VersionStore {
  /** Schemas whose table is known to have the `layers` column. */
  private readonly withLayers = new Set<string>();

  constructor(private readonly db: PostgresDatabase) {}

  private table(schema: string): string {
    return schemaTable(schema, VERSIONS_TABLE);
  }

  /** Whether the schema's table has the `layers` column: one made before versions kept their layers has not, until a write adds it. */
  private async hasLayers(query: Query, schema: string): Promise<boolean> {
    if (this.withLayers.has(schema)) return true;
    const found = await query(
      `SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'layers' AND NOT attisdropped`,
      [this.table(schema)],
    );
    if (found.length > 0) this.withLayers.add(schema);
    return found.length > 0;
  }

  /** Gives a table made before versions kept their layers the column for them; its rows keep none. */
  private async addLayersColumn(query: Query, schema: string): Promise<void> {
    if (!(await this.hasLayers(query, schema)))
      await query(`ALTER TABLE ${this.table(schema)} ADD COLUMN IF NOT EXISTS layers BYTEA`);
    this.withLayers.add(schema);
  }

  async latest(ref: ProjectRef): Promise<{ id: number; identity: string } | undefined> {
    const rows = this.db.query<{ id: number; identity: string }>(
      `SELECT id::float8 AS id, identity FROM ${this.table(ref.schema)} WHERE project = $1 ORDER BY id DESC LIMIT 1`,
      [ref.name],
    );
    return (await unlessMissing(rows, []))[0];
  }

  async append(ref: ProjectRef, version: NewVersion): Promise<number> {
    return this.db.transaction(async (query) => {
      await ensureProjectTable(query, ref.schema, VERSIONS_TABLE, COLUMNS);
      await this.addLayersColumn(query, ref.schema);
      const table = this.table(ref.schema);
      const [row] = await query<{ id: number }>(
        `INSERT INTO ${table} (project, id, time, who, route, summary, identity, keyframe, payload, styles, layers)
           SELECT $1, coalesce(max(id), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM ${table} WHERE project = $1
           RETURNING id::float8 AS id`,
        [
          ref.name,
          version.time,
          version.who,
          version.route,
          version.summary,
          version.identity,
          version.keyframe,
          version.payload,
          version.styles ?? null,
          version.layers ?? null,
        ],
      );
      return (row as { id: number }).id;
    });
  }

  async list(ref: ProjectRef, before: number | undefined, limit: number): Promise<VersionFacts[]> {
    const rows = this.db.query<VersionFacts>(
      `SELECT ${FACTS} FROM ${this.table(ref.schema)} WHERE project = $1 AND id < $2 ORDER BY id DESC LIMIT $3`,
      [ref.name, before ?? Number.MAX_SAFE_INTEGER, limit],
    );
    return unlessMissing(rows, []);
  }

  async facts(ref: ProjectRef, id: number): Promise<VersionFacts | undefined> {
    const rows = this.db.query<VersionFacts>(
      `SELECT ${FACTS} FROM ${this.table(ref.schema)} WHERE project = $1 AND id = $2`,
      [ref.name, id],
    );
    return (await unlessMissing(rows, []))[0];
  }

  async identityOf(ref: ProjectRef, id: number): Promise<string | undefined> {
    const rows = this.db.query<{ identity: string }>(
      `SELECT identity FROM ${this.table(ref.schema)} WHERE project = $1 AND id = $2`,
      [ref.name, id],
    );
    return (await unlessMissing(rows, []))[0]?.identity;
  }

  async chain(ref: ProjectRef, id: number): Promise<VersionContent[]> {
    const table = this.table(ref.schema);
    const query: Query = (sql, values) => this.db.query(sql, values);
    const layers = (await this.hasLayers(query, ref.schema)) ? 'layers' : 'NULL::bytea AS layers';
    const rows = await unlessMissing(
      this.db.query<Omit<VersionContent, 'layers'> & { layers: Buffer | null }>(
        `SELECT id::float8 AS id, identity, keyframe, payload, ${layers} FROM ${table}
           WHERE project = $1 AND id <= $2 AND id >= (
             SELECT max(id) FROM ${table} WHERE project = $1 AND keyframe AND id <= $2) ORDER BY id`,
        [ref.name, id],
      ),
      [],
    );
    if (rows.at(-1)?.id !== id) return [];
    return rows.map((row) => ({ ...row, layers: row.layers ?? undefined }));
  }

  async styles(ref: ProjectRef, id: number): Promise<Buffer | undefined> {
    const rows = this.db.query<{ styles: Buffer }>(
      `SELECT styles FROM ${this.table(ref.schema)} WHERE project = $1 AND id <= $2 AND styles IS NOT NULL
         ORDER BY id DESC LIMIT 1`,
      [ref.name, id],
    );
    return (await unlessMissing(rows, []))[0]?.styles;
  }

  async prune(ref: ProjectRef, retention: Retention): Promise<number> {
    const table = this.table(ref.schema);
    const rows = this.db.query(
      `DELETE FROM ${table} WHERE project = $1 AND id < (
         SELECT max(id) FROM ${table} WHERE project = $1 AND keyframe AND id <= (
           SELECT least(greatest(
             coalesce((SELECT id FROM ${table} WHERE project = $1 ORDER BY id DESC LIMIT 1 OFFSET $2), 0),
             coalesce((SELECT min(id) FROM ${table} WHERE project = $1 AND time >= $3), 9e18::bigint)),
             (SELECT max(id) FROM ${table} WHERE project = $1))))
       RETURNING id`,
      [ref.name, retention.versions - 1, retention.since],
    );
    return (await unlessMissing(rows, [])).length;
  }

  async forget(ref: ProjectRef): Promise<void> {
    await unlessMissing(this.db.query(`DELETE FROM ${this.table(ref.schema)} WHERE project = $1`, [ref.name]), []);
  }
}
