/**
 * Names and tables of a schema that holds projects: QGIS's `qgis_projects`, and the tables
 * Steward keeps beside it, whose rows reference a project and go wherever it goes.
 */
import { DatabaseError, escapeIdentifier } from 'pg';

import { BadRequest, Forbidden } from '../errors.js';
import { PostgresDatabase, type Query } from './pg-database.js';

/** PostgreSQL truncates longer identifiers, which would make a schema silently another one. */
export const MAX_IDENTIFIER_BYTES = 63;

/** The schema's name quoted for SQL; BadRequest for a name PostgreSQL would truncate. */
export function schemaIdentifier(schema: string): string {
  if (Buffer.byteLength(schema) > MAX_IDENTIFIER_BYTES) {
    throw new BadRequest(`schema name "${schema.slice(0, 80)}" is longer than ${MAX_IDENTIFIER_BYTES} bytes`);
  }
  return escapeIdentifier(schema);
}

/** A table of the schema, quoted for SQL. */
export function schemaTable(schema: string, table: string): string {
  return `${schemaIdentifier(schema)}.${escapeIdentifier(table)}`;
}

/** QGIS's table of the schema's projects. */
export function projectsTable(schema: string): string {
  return schemaTable(schema, 'qgis_projects');
}

/** The schema or table does not exist (yet). */
export function isMissingTable(error: unknown): boolean {
  return error instanceof DatabaseError && (error.code === '42P01' || error.code === '3F000');
}

/** What `work` answers, or `fallback` when its schema or table does not exist. */
export async function unlessMissing<T>(work: Promise<T>, fallback: T): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isMissingTable(error)) return fallback;
    throw error;
  }
}

/** A row that names a project the schema does not have (a foreign key refused it). */
export function isMissingProject(error: unknown): boolean {
  return error instanceof DatabaseError && error.code === '23503';
}

/**
 * Creates a table of Steward's beside the schema's projects when it is missing, in the
 * transaction `query` runs in: `columns` follow a `project` column that references the project
 * (deleting or renaming a project, through Steward, QGIS or SQL, takes its rows along). Processes
 * creating it at once take turns. Forbidden when the database user may not create it.
 */
export async function ensureProjectTable(query: Query, schema: string, table: string, columns: string): Promise<void> {
  const name = schemaTable(schema, table);
  const [found] = await query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [name]);
  if (found?.exists) return;
  await PostgresDatabase.lockForTransaction(query, JSON.stringify(['steward table', schema, table]));
  try {
    await query(
      `CREATE TABLE IF NOT EXISTS ${name} (project TEXT NOT NULL REFERENCES ${projectsTable(schema)} (name) ON DELETE CASCADE ON UPDATE CASCADE, ${columns})`,
    );
  } catch (error) {
    if (error instanceof DatabaseError && error.code === '42501')
      throw new Forbidden(`the database user may not create ${table} in schema "${schema}"`);
    throw error;
  }
}
