import { NotFound } from '../errors.js';
import { GEOMETRIES, type Geometry } from '../qgis/geometry.js';
import { folderStyles, removeFolderStyles } from './folder-styles.js';
import { type PostgresDatabase, type Query } from './pg-database.js';
import { ensureProjectTable, isMissingProject, schemaTable, unlessMissing } from './pg-schema.js';
import { type ProjectRef } from './project-store.js';
import { defaultStyles, type StyleChange, type StyleStore } from './style-store.js';

/** A schema's styles: one row a style of a project, its QML with any images embedded. */
const STYLES = 'steward_styles';
/** A schema's default styles: one row a geometry of a project whose default is not QGIS's own. */
const DEFAULTS = 'steward_default_styles';
const STYLE_COLUMNS = 'name TEXT NOT NULL, qml TEXT NOT NULL, PRIMARY KEY (project, name)';
const DEFAULT_COLUMNS = `geometry TEXT NOT NULL CHECK (geometry IN (${GEOMETRIES.map((g) => `'${g}'`).join(', ')})),
  style TEXT NOT NULL, PRIMARY KEY (project, geometry)`;

/**
 * Styles as rows beside the projects of their schema (`steward_styles`, `steward_default_styles`),
 * which every Steward process on the database reads at once. A package's images are embedded in
 * its QML, which QGIS Server draws on any host: the project that holds a copy of the style is all
 * it reads.
 */
export class PostgresStyles implements StyleStore {
  constructor(private readonly db: PostgresDatabase) {}

  async names(ref: ProjectRef): Promise<string[]> {
    const rows = this.db.query<{ name: string }>(
      `SELECT name FROM ${schemaTable(ref.schema, STYLES)} WHERE project = $1`,
      [ref.name],
    );
    return (await unlessMissing(rows, [])).map((row) => row.name).sort();
  }

  read(ref: ProjectRef, name: string): Promise<string | undefined> {
    return this.readIn((sql, values) => this.db.query(sql, values), ref, name);
  }

  private async readIn(query: Query, ref: ProjectRef, name: string): Promise<string | undefined> {
    const rows = query<{ qml: string }>(
      `SELECT qml FROM ${schemaTable(ref.schema, STYLES)} WHERE project = $1 AND name = $2`,
      [ref.name, name],
    );
    return (await unlessMissing(rows, []))[0]?.qml;
  }

  async apply(ref: ProjectRef, changes: readonly StyleChange[]): Promise<void> {
    if (changes.length > 0) await this.db.transaction((query) => this.applyIn(query, ref, changes));
  }

  /** Stores and removes styles in the transaction `query` runs in (that of a project's write, say). */
  async applyIn(query: Query, ref: ProjectRef, changes: readonly StyleChange[]): Promise<void> {
    if (changes.length === 0) return;
    const table = schemaTable(ref.schema, STYLES);
    await this.refusingMissingProject(ref, async () => {
      await ensureProjectTable(query, ref.schema, STYLES, STYLE_COLUMNS);
      for (const { name, qml } of changes) {
        if (qml === undefined) await query(`DELETE FROM ${table} WHERE project = $1 AND name = $2`, [ref.name, name]);
        else
          await query(
            `INSERT INTO ${table} (project, name, qml) VALUES ($1, $2, $3) ON CONFLICT (project, name) DO UPDATE SET qml = EXCLUDED.qml`,
            [ref.name, name, qml],
          );
      }
    });
  }

  async defaults(ref: ProjectRef): Promise<Record<Geometry, string>> {
    const rows = this.db.query<{ geometry: Geometry; style: string }>(
      `SELECT geometry, style FROM ${schemaTable(ref.schema, DEFAULTS)} WHERE project = $1`,
      [ref.name],
    );
    return defaultStyles(await unlessMissing(rows, []));
  }

  async setDefault(ref: ProjectRef, geometry: Geometry, name: string): Promise<void> {
    await this.db.transaction((query) =>
      this.refusingMissingProject(ref, async () => {
        await ensureProjectTable(query, ref.schema, DEFAULTS, DEFAULT_COLUMNS);
        await query(
          `INSERT INTO ${schemaTable(ref.schema, DEFAULTS)} (project, geometry, style) VALUES ($1, $2, $3)
             ON CONFLICT (project, geometry) DO UPDATE SET style = EXCLUDED.style`,
          [ref.name, geometry, name],
        );
      }),
    );
  }

  /**
   * Takes in the styles a data folder holds from before styles were kept in the database
   * (folder-styles.ts), then removes their files: those the project has under the same name are
   * the database's; one that differs from it is left in the folder, and its name answered.
   */
  async adopt(ref: ProjectRef, dir: string): Promise<{ adopted: number; differing: string[] }> {
    const found = folderStyles(dir);
    if (found.styles.length === 0 && found.defaults.length === 0) {
      await removeFolderStyles(dir, []);
      return { adopted: 0, differing: [] };
    }
    const differing = await this.db.transaction(async (query) => {
      const left: string[] = [];
      if (found.styles.length > 0) await ensureProjectTable(query, ref.schema, STYLES, STYLE_COLUMNS);
      if (found.defaults.length > 0) await ensureProjectTable(query, ref.schema, DEFAULTS, DEFAULT_COLUMNS);
      for (const { name, qml } of found.styles) {
        await query(
          `INSERT INTO ${schemaTable(ref.schema, STYLES)} (project, name, qml) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
          [ref.name, name, qml],
        );
        if ((await this.readIn(query, ref, name)) !== qml) left.push(name);
      }
      for (const { geometry, style } of found.defaults) {
        await query(
          `INSERT INTO ${schemaTable(ref.schema, DEFAULTS)} (project, geometry, style) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
          [ref.name, geometry, style],
        );
      }
      return left;
    });
    const adopted = found.styles.map((style) => style.name).filter((name) => !differing.includes(name));
    await removeFolderStyles(dir, adopted);
    return { adopted: adopted.length, differing };
  }

  imagesDir(): undefined {
    return undefined;
  }

  imageFolders(): string[] {
    return [];
  }

  /** Runs `work`, whose rows name the project: NotFound when the project is gone (removed meanwhile). */
  private async refusingMissingProject(ref: ProjectRef, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      if (isMissingProject(error))
        throw new NotFound(`project "${ref.name}" does not exist in schema "${ref.schema}"`, {
          code: 'project_not_found',
        });
      throw error;
    }
  }
}
