import { type PostgresDatabase } from '../storage/pg-database.js';
import { type JobFilter, type JobRecord } from './record.js';
import { type JobStore } from './store.js';

const TABLE = 'steward.jobs';
const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS steward;
CREATE TABLE IF NOT EXISTS ${TABLE} (
  id uuid PRIMARY KEY,
  kind text NOT NULL,
  project text NOT NULL,
  project_schema text,
  state text NOT NULL,
  created timestamptz NOT NULL,
  record jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_created ON ${TABLE} (created DESC);
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Jobs as rows of `steward.jobs` in the database that holds the projects: the record as JSON,
 * with the columns the listing filters on beside it.
 */
export class PostgresJobStore implements JobStore {
  /** Creates the table on first use. */
  private readonly ensureTable: () => Promise<void>;

  constructor(private readonly db: PostgresDatabase) {
    this.ensureTable = db.createOnce('steward.jobs', SCHEMA);
  }

  async insert(job: JobRecord): Promise<void> {
    await this.ensureTable();
    await this.db.query(
      `INSERT INTO ${TABLE} (id, kind, project, project_schema, state, created, record) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [job.id, job.kind, job.project, job.schema ?? null, job.state, job.created, JSON.stringify(job)],
    );
  }

  async get(id: string): Promise<JobRecord | undefined> {
    if (!UUID.test(id)) return undefined;
    await this.ensureTable();
    const rows = await this.db.query<{ record: JobRecord }>(`SELECT record FROM ${TABLE} WHERE id = $1`, [id]);
    return rows[0]?.record;
  }

  async list(filter: JobFilter): Promise<JobRecord[]> {
    await this.ensureTable();
    const conditions: string[] = [];
    const values: unknown[] = [];
    const where = (column: string, value: string | undefined): void => {
      if (value === undefined) return;
      values.push(value);
      conditions.push(`${column} = $${values.length}`);
    };
    where('project', filter.project);
    where('project_schema', filter.schema);
    where('kind', filter.kind);
    where('state', filter.state);
    const sql = `SELECT record FROM ${TABLE}${conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : ''} ORDER BY created DESC, id DESC`;
    return (await this.db.query<{ record: JobRecord }>(sql, values)).map((row) => row.record);
  }

  async update(id: string, change: (job: JobRecord) => JobRecord | undefined): Promise<JobRecord | undefined> {
    if (!UUID.test(id)) return undefined;
    await this.ensureTable();
    return this.db.transaction(async (query) => {
      const rows = await query<{ record: JobRecord }>(`SELECT record FROM ${TABLE} WHERE id = $1 FOR UPDATE`, [id]);
      const job = rows[0]?.record;
      if (job === undefined) return undefined;
      const changed = change(job);
      if (changed === undefined) return job;
      await query(`UPDATE ${TABLE} SET state = $2, record = $3 WHERE id = $1`, [
        id,
        changed.state,
        JSON.stringify(changed),
      ]);
      return changed;
    });
  }
}
