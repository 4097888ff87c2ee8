import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import { DatabaseError, escapeIdentifier } from 'pg';

import { BadRequest, Conflict, Forbidden, NotFound } from '../errors.js';
import { clearDataDirLeftovers, clearInto } from './leftovers.js';
import { KeyedMutex } from './lock.js';
import { PostgresDatabase, type Query } from './pg-database.js';
import { isMissingProject, MAX_IDENTIFIER_BYTES, projectsTable, schemaIdentifier, unlessMissing } from './pg-schema.js';
import { PostgresStyles } from './postgres-styles.js';
import { PostgresVersions } from './postgres-versions.js';
import { ProjectArchive } from './project-archive.js';
import {
  type LeftoverReport,
  type ProjectContent,
  type ProjectRef,
  type ProjectStore,
  type StoredProject,
  wholeContent,
} from './project-store.js';
import { type StyleChange } from './style-store.js';

const MAX_FILE_NAME_BYTES = 255;

/** The row metadata QGIS writes on every save: UTC time of the save and the database user. */
const METADATA = `jsonb_build_object('last_modified_time', (now() AT TIME ZONE 'utc')::text, 'last_modified_user', current_user::text)`;
/** The table of a schema's pinned projects (pinned()). */
const PIN_TABLE = 'steward_pinned_projects';
const IDENTITY_COLUMNS = `xmin::text AS xmin, metadata->>'last_modified_time' AS modified`;

interface IdentityRow {
  xmin: string;
  modified: string | null;
}

function identityOf(row: IdentityRow): string {
  return `${row.xmin}:${row.modified ?? ''}`;
}

/**
 * A query item value as QUrl encodes it: QGIS decodes the project URI with QUrl, which leaves
 * these delimiters percent-encoded if they arrive that way, so they must go unencoded.
 */
function qgisQueryValue(value: string): string {
  return encodeURIComponent(value).replace(/%(24|2B|2C|2F|3A|3B|3F|40|5B|5D)/g, (_, hex: string) =>
    String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/**
 * Projects as rows of `<schema>.qgis_projects`, exactly as QGIS's own PostgreSQL project storage
 * keeps them (zipped project in `content`, `metadata` JSON), so QGIS Server and QGIS Desktop open
 * them; their styles are rows beside them (PostgresStyles). Each project has a data folder,
 * `<projects_dir>/steward/<schema>_<name>`, of this host's own.
 */
export class PostgresStore implements ProjectStore {
  readonly kind = 'postgresql' as const;
  readonly styles: PostgresStyles;
  /** Deleted with their project by the database (a foreign key). */
  readonly versions: PostgresVersions;
  private readonly mutex = new KeyedMutex();

  private constructor(
    private readonly service: string,
    private readonly db: PostgresDatabase,
    private readonly projectsDir: string,
  ) {
    this.styles = new PostgresStyles(db);
    this.versions = new PostgresVersions(db);
  }

  /** Connects to the named connection service; throws ConfigError when that is not possible. */
  static async open(service: string, projectsDir: string, serviceFiles: readonly string[]): Promise<PostgresStore> {
    return new PostgresStore(service, await PostgresDatabase.connect(service, serviceFiles), projectsDir);
  }

  close(): Promise<void> {
    return this.db.close();
  }

  /** The database the projects are in, for what Steward keeps beside them (jobs). */
  get database(): PostgresDatabase {
    return this.db;
  }

  dataDir(ref: ProjectRef): string {
    return join(this.projectsDir, 'steward', `${ref.schema}_${ref.name}`);
  }

  async mapParameter(ref: ProjectRef): Promise<string> {
    const item = (key: string, value: string): string => `${key}=${qgisQueryValue(value)}`;
    return `postgresql:?${[item('service', this.service), item('schema', ref.schema), item('project', ref.name)].join('&')}`;
  }

  private table(schema: string): string {
    return projectsTable(schema);
  }

  async probe(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  async list(schema: string): Promise<string[]> {
    const rows = this.db.query<{ name: string }>(`SELECT name FROM ${this.table(schema)} ORDER BY name`);
    return (await unlessMissing(rows, [])).map((row) => row.name);
  }

  private async row<Row extends IdentityRow>(ref: ProjectRef, columns: string): Promise<Row | undefined> {
    const rows = this.db.query<Row>(`SELECT ${columns} FROM ${this.table(ref.schema)} WHERE name = $1`, [ref.name]);
    return (await unlessMissing(rows, []))[0];
  }

  async identity(ref: ProjectRef): Promise<string | undefined> {
    const row = await this.row(ref, IDENTITY_COLUMNS);
    return row && identityOf(row);
  }

  async read(ref: ProjectRef): Promise<StoredProject | undefined> {
    const row = await this.row<IdentityRow & { content: Buffer }>(ref, `content, ${IDENTITY_COLUMNS}`);
    return row && { content: ProjectArchive.open(row.content).content, identity: identityOf(row) };
  }

  async create(ref: ProjectRef, text: string): Promise<void> {
    this.checkAddressable(ref);
    if (await this.identity(ref))
      throw new Conflict(`project "${ref.name}" already exists in schema "${ref.schema}"`, { code: 'name_taken' });
    await this.claimDataDir(ref);
    const content = await ProjectArchive.create(ref.name, text).bytes();
    await this.db.transaction(async (query) => {
      await this.ensureTable(query, ref.schema);
      const inserted = await query(
        `INSERT INTO ${this.table(ref.schema)} (name, metadata, content) VALUES ($1, ${METADATA}, $2) ON CONFLICT (name) DO NOTHING RETURNING name`,
        [ref.name, content],
      );
      if (inserted.length === 0)
        throw new Conflict(`project "${ref.name}" already exists in schema "${ref.schema}"`, { code: 'name_taken' });
    });
  }

  /** Names QGIS can be given in a project URI, and a data folder name the filesystem takes. */
  private checkAddressable(ref: ProjectRef): void {
    // QGIS decodes the URI leaving `%25` as it is, so it could never open such a project.
    if (ref.schema.includes('%') || ref.name.includes('%')) {
      throw new BadRequest('QGIS cannot open a project from PostgreSQL when its name or schema contains "%"');
    }
    if (Buffer.byteLength(`${ref.schema}_${ref.name}`) > MAX_FILE_NAME_BYTES) {
      throw new BadRequest(`schema and project name together must be at most ${MAX_FILE_NAME_BYTES - 1} bytes`);
    }
  }

  /**
   * Makes the data folder the new project's: refused when another project already owns it
   * (schema `a_b` with project `c` and schema `a` with project `b_c` share `a_b_c`); a folder left
   * by a project deleted outside Steward is cleared.
   */
  private async claimDataDir(ref: ProjectRef): Promise<void> {
    const folder = `${ref.schema}_${ref.name}`;
    for (let at = folder.indexOf('_'); at >= 0; at = folder.indexOf('_', at + 1)) {
      const other = { schema: folder.slice(0, at), name: folder.slice(at + 1) };
      if (other.schema === ref.schema || other.name === '' || Buffer.byteLength(other.schema) > MAX_IDENTIFIER_BYTES)
        continue;
      if (await this.identity(other)) {
        throw new Conflict(
          `project "${ref.name}" would share its data folder with project "${other.name}" of schema "${other.schema}"`,
          { code: 'name_taken' },
        );
      }
    }
    await rm(this.dataDir(ref), { recursive: true, force: true });
  }

  /** Creates the schema and QGIS's projects table when missing, as QGIS does on its first save. */
  private async ensureTable(query: Query, schema: string): Promise<void> {
    await PostgresDatabase.lockForTransaction(query, JSON.stringify(['steward schema', schema]));
    const [namespace] = await query<{ has_table: boolean }>(
      `SELECT EXISTS (SELECT FROM pg_class WHERE relnamespace = n.oid AND relname = 'qgis_projects') AS has_table
         FROM pg_namespace n WHERE nspname = $1`,
      [schema],
    );
    try {
      if (!namespace) await query(`CREATE SCHEMA ${escapeIdentifier(schema)}`);
      if (!namespace?.has_table)
        await query(`CREATE TABLE ${this.table(schema)} (name TEXT PRIMARY KEY, metadata JSONB, content BYTEA)`);
    } catch (error) {
      if (!(error instanceof DatabaseError)) throw error;
      if (error.code === '42939') throw new BadRequest(`schema name "${schema}" is reserved by PostgreSQL`);
      if (error.code === '42501')
        throw new Forbidden(`the database user may not create schema "${schema}" or its qgis_projects table`);
      throw error;
    }
  }

  async write(
    ref: ProjectRef,
    content: ProjectContent,
    styles: readonly StyleChange[] = [],
    whileWriting?: () => void,
  ): Promise<string> {
    const table = this.table(ref.schema);
    const written = this.db.transaction(async (query) => {
      // The archive is rebuilt from the stored one, so entries QGIS added (auxiliary storage) are kept.
      const [current] = await query<{ content: Buffer | null }>(
        `SELECT content FROM ${table} WHERE name = $1 FOR UPDATE`,
        [ref.name],
      );
      const archive = current?.content ? ProjectArchive.open(current.content) : ProjectArchive.create(ref.name, '');
      archive.content = wholeContent(content);
      const [row] = await query<IdentityRow>(
        `INSERT INTO ${table} (name, metadata, content) VALUES ($1, ${METADATA}, $2)
           ON CONFLICT (name) DO UPDATE SET content = EXCLUDED.content, metadata = EXCLUDED.metadata
           RETURNING ${IDENTITY_COLUMNS}`,
        [ref.name, await archive.bytes()],
      );
      await this.styles.applyIn(query, ref, styles);
      return identityOf(row as IdentityRow);
    });
    whileWriting?.();
    const identity = await unlessMissing(written, undefined);
    if (identity === undefined) throw new NotFound(`schema "${ref.schema}" has no qgis_projects table`);
    return identity;
  }

  async remove(ref: ProjectRef): Promise<boolean> {
    const rows = this.db.query(`DELETE FROM ${this.table(ref.schema)} WHERE name = $1 RETURNING name`, [ref.name]);
    if ((await unlessMissing(rows, [])).length === 0) return false;
    await rm(this.dataDir(ref), { recursive: true, force: true });
    return true;
  }

  withLock<T>(ref: ProjectRef, work: () => Promise<T>): Promise<T> {
    const key = JSON.stringify(['steward project', ref.schema, ref.name]);
    return this.mutex.run(key, () => this.db.withAdvisoryLock(key, work));
  }

  /** Clears the leftovers in the data folder of every project of every schema this user can read. */
  async clearLeftovers(): Promise<LeftoverReport> {
    const report: LeftoverReport = { cleared: 0, failures: [] };
    await this.eachProject((ref) => clearInto(report, ref, () => clearDataDirLeftovers(this, ref)));
    return report;
  }

  /**
   * Takes into the database the styles that the data folders of every schema's projects hold from
   * before styles were kept there (PostgresStyles.adopt), each project under its lock. `cleared`
   * counts the styles taken in; a style that differs from the database's is a failure.
   */
  async adoptFolderStyles(): Promise<LeftoverReport> {
    const report: LeftoverReport = { cleared: 0, failures: [] };
    await this.eachProject((ref) =>
      clearInto(report, ref, async () => {
        const dir = this.dataDir(ref);
        const { adopted, differing } = await this.withLock(ref, () => this.styles.adopt(ref, dir));
        if (differing.length > 0) {
          const names = differing.map((style) => `"${style}"`).join(', ');
          const reason = `its styles ${names} in ${dir} differ from those of the same name in the database and were left there`;
          report.failures.push({ project: ref, reason, refused: false });
        }
        return adopted;
      }),
    );
    return report;
  }

  /** Runs `work` for every project of every schema this user can read, one after the other. */
  private async eachProject(work: (ref: ProjectRef) => Promise<unknown>): Promise<void> {
    for (const schema of await this.projectSchemas()) {
      for (const name of await this.list(schema)) await work({ schema, name });
    }
  }

  private async projectSchemas(table = 'qgis_projects'): Promise<string[]> {
    const rows = await this.db.query<{ schema: string }>(
      `SELECT n.nspname AS schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relname = $1 AND c.relkind = 'r' AND has_table_privilege(c.oid, 'SELECT')
         ORDER BY n.nspname`,
      [table],
    );
    return rows.map((row) => row.schema);
  }

  /**
   * A schema's pins: a table beside QGIS's whose rows reference its projects, so that deleting a
   * project (through Steward, QGIS or SQL) deletes its pin and renaming it renames the pin.
   */
  private pinTable(schema: string): string {
    return `${schemaIdentifier(schema)}.${PIN_TABLE}`;
  }

  async pinned(): Promise<ProjectRef[]> {
    const pins: ProjectRef[] = [];
    for (const schema of await this.projectSchemas(PIN_TABLE)) {
      const rows = this.db.query<{ name: string }>(`SELECT name FROM ${this.pinTable(schema)} ORDER BY name`);
      for (const { name } of await unlessMissing(rows, [])) pins.push({ schema, name });
    }
    return pins;
  }

  async isPinned(ref: ProjectRef): Promise<boolean> {
    const rows = this.db.query(`SELECT 1 FROM ${this.pinTable(ref.schema)} WHERE name = $1`, [ref.name]);
    return (await unlessMissing(rows, [])).length > 0;
  }

  async setPinned(ref: ProjectRef, pinned: boolean): Promise<void> {
    const pins = this.pinTable(ref.schema);
    if (!pinned) {
      await unlessMissing(this.db.query(`DELETE FROM ${pins} WHERE name = $1`, [ref.name]), []);
      return;
    }
    await this.db.transaction(async (query) => {
      await PostgresDatabase.lockForTransaction(query, JSON.stringify(['steward pins', ref.schema]));
      try {
        await query(
          `CREATE TABLE IF NOT EXISTS ${pins} (name TEXT PRIMARY KEY REFERENCES ${this.table(ref.schema)} (name) ON DELETE CASCADE ON UPDATE CASCADE)`,
        );
        await query(`INSERT INTO ${pins} (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, [ref.name]);
      } catch (error) {
        if (error instanceof DatabaseError && error.code === '42501')
          throw new Forbidden(`the database user may not create or write ${PIN_TABLE} in schema "${ref.schema}"`);
        if (isMissingProject(error))
          throw new NotFound(`project "${ref.name}" does not exist in schema "${ref.schema}"`, {
            code: 'project_not_found',
          });
        throw error;
      }
    });
  }
}
