import { PostgresDatabase } from '../storage/pg-database.js';
import {
  type AccessStore,
  type AuditEntry,
  type AuditFilter,
  type RoleDefinition,
  type TokenRecord,
} from './records.js';
import { isTokenId } from './token-secret.js';

/** Told of every change of tokens and roles, so that every process drops what it cached at once. */
const CHANNEL = 'steward_access';

/** Taken by each change of the tokens, so that their versions are committed in the order they are drawn. */
const TOKEN_CHANGES_LOCK = 'steward.access_tokens';

const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS steward;
CREATE SEQUENCE IF NOT EXISTS steward.access_token_versions;
CREATE TABLE IF NOT EXISTS steward.access_tokens (
  id text PRIMARY KEY,
  name text NOT NULL,
  roles jsonb NOT NULL,
  created timestamptz NOT NULL,
  expires timestamptz,
  hash text NOT NULL
);
ALTER TABLE steward.access_tokens
  ADD COLUMN IF NOT EXISTS version bigint NOT NULL DEFAULT nextval('steward.access_token_versions');
CREATE INDEX IF NOT EXISTS access_tokens_version ON steward.access_tokens (version);
CREATE TABLE IF NOT EXISTS steward.access_token_removals (
  id text PRIMARY KEY,
  version bigint NOT NULL DEFAULT nextval('steward.access_token_versions')
);
CREATE INDEX IF NOT EXISTS access_token_removals_version ON steward.access_token_removals (version);
ALTER TABLE steward.access_token_removals ADD COLUMN IF NOT EXISTS removed timestamptz NOT NULL DEFAULT now();
CREATE TABLE IF NOT EXISTS steward.access_token_removals_pruned (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  through bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS steward.access_roles (
  name text PRIMARY KEY,
  definition jsonb NOT NULL
);
CREATE TABLE IF NOT EXISTS steward.audit (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  who text,
  token text,
  method text NOT NULL,
  route text NOT NULL,
  path text NOT NULL,
  project text,
  project_schema text,
  status integer NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_at ON steward.audit (at DESC);
`;

interface TokenRow {
  id: string;
  name: string;
  roles: string[];
  created: Date;
  expires: Date | null;
  hash: string;
}

function tokenRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    roles: row.roles,
    created: row.created.toISOString(),
    expires: row.expires?.toISOString() ?? null,
    hash: row.hash,
  };
}

const TOKEN_COLUMNS = 'id, name, roles, created, expires, hash';

/**
 * A token made (its row) or revoked (its id alone), at a version of the tokens; or `pruned`, the
 * version through which revocations may have been forgotten.
 */
type TokenChange = ({ change: 'made' } & TokenRow) | { change: 'removed'; id: string } | { change: 'pruned' };

/**
 * The changes of the tokens after `version`, oldest first, in one statement (one snapshot): a
 * token made, the id of one revoked, and whether revocations after `version` were pruned.
 */
const TOKEN_CHANGES = `
SELECT ${TOKEN_COLUMNS}, version, 'made' AS change FROM steward.access_tokens WHERE version > $1
UNION ALL
SELECT id, NULL, NULL, NULL, NULL, NULL, version, 'removed' FROM steward.access_token_removals WHERE version > $1
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, through, 'pruned' FROM steward.access_token_removals_pruned WHERE through > $1
ORDER BY version`;

/**
 * How long a revocation is kept as a row, for the processes that read the tokens' changes: they
 * do every 5 s. One that read none for longer reads every token again (tokens()).
 */
const REMOVALS_KEPT = '1 hour';

/** Forgets the revocations older than REMOVALS_KEPT, and up to which version it did. */
const PRUNE_REMOVALS = `
WITH pruned AS (
  DELETE FROM steward.access_token_removals WHERE removed < now() - interval '${REMOVALS_KEPT}' RETURNING version
)
INSERT INTO steward.access_token_removals_pruned (through)
SELECT max(version) FROM pruned HAVING count(*) > 0
ON CONFLICT (one) DO UPDATE SET through = GREATEST(steward.access_token_removals_pruned.through, EXCLUDED.through)`;

/**
 * Tokens, roles and the audit log as rows of `steward.access_tokens`, `steward.access_roles` and
 * `steward.audit` in the database of the projects; each change of the first two is notified on
 * `steward_access` to every process listening.
 *
 * Each token made and each one revoked (`steward.access_token_removals`) takes the next version
 * of the tokens, under an advisory lock held to its commit: a reader that saw a version saw
 * every one before it, and reads again only the changes after it. Revocations older than
 * REMOVALS_KEPT are pruned as the next one is made; a reader whose version is older than the
 * last one pruned reads every token again.
 */
export class PostgresAccessStore implements AccessStore {
  /** Creates the tables on first use. */
  private readonly ensureTables: () => Promise<void>;
  /** The tokens as of `version`, by id (tokens()). */
  private readonly tokensRead = new Map<string, TokenRecord>();
  private version = '0';

  constructor(private readonly db: PostgresDatabase) {
    this.ensureTables = db.createOnce('steward.access', SCHEMA);
  }

  /**
   * Every token: those read before, changed by what was made and revoked since, so that the 5 s
   * refresh of 10,000 tokens (AccessService) reads the changes rather than every row.
   */
  async tokens(): Promise<TokenRecord[]> {
    await this.ensureTables();
    type Change = TokenChange & { version: string };
    let changes = await this.db.query<Change>(TOKEN_CHANGES, [this.version]);
    if (this.version !== '0' && changes.some(({ change }) => change === 'pruned')) {
      // Revocations not read yet were forgotten: read every token, and forget those read before
      // only once that is done, so that a read of this process meanwhile applies in order.
      changes = await this.db.query<Change>(TOKEN_CHANGES, ['0']);
      this.tokensRead.clear();
      this.version = '0';
    }
    for (const change of changes) {
      // A read begun before another of this process's ended repeats changes that one applied.
      if (change.change === 'pruned' || BigInt(change.version) <= BigInt(this.version)) continue;
      if (change.change === 'removed') this.tokensRead.delete(change.id);
      else this.tokensRead.set(change.id, tokenRecord(change));
      this.version = change.version;
    }
    return [...this.tokensRead.values()];
  }

  async token(id: string): Promise<TokenRecord | undefined> {
    if (!isTokenId(id)) return undefined;
    await this.ensureTables();
    const rows = await this.db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM steward.access_tokens WHERE id = $1`, [
      id,
    ]);
    return rows[0] && tokenRecord(rows[0]);
  }

  async addToken(token: TokenRecord): Promise<void> {
    await this.ensureTables();
    await this.db.transaction(async (query) => {
      await PostgresDatabase.lockForTransaction(query, TOKEN_CHANGES_LOCK);
      await query(
        'INSERT INTO steward.access_tokens (id, name, roles, created, expires, hash) VALUES ($1, $2, $3, $4, $5, $6)',
        [token.id, token.name, JSON.stringify(token.roles), token.created, token.expires, token.hash],
      );
      await query('SELECT pg_notify($1, $2)', [CHANNEL, 'tokens']);
    });
  }

  async removeToken(id: string): Promise<boolean> {
    if (!isTokenId(id)) return false;
    await this.ensureTables();
    return this.db.transaction(async (query) => {
      await PostgresDatabase.lockForTransaction(query, TOKEN_CHANGES_LOCK);
      const rows = await query('DELETE FROM steward.access_tokens WHERE id = $1 RETURNING id', [id]);
      if (rows.length === 0) return false;
      await query('INSERT INTO steward.access_token_removals (id) VALUES ($1)', [id]);
      await query(PRUNE_REMOVALS);
      await query('SELECT pg_notify($1, $2)', [CHANNEL, 'tokens']);
      return true;
    });
  }

  async roles(): Promise<Map<string, RoleDefinition>> {
    await this.ensureTables();
    const rows = await this.db.query<{ name: string; definition: RoleDefinition }>(
      'SELECT name, definition FROM steward.access_roles',
    );
    return new Map(rows.map((row) => [row.name, row.definition]));
  }

  async putRole(name: string, role: RoleDefinition): Promise<boolean> {
    await this.ensureTables();
    return this.db.transaction(async (query) => {
      const rows = await query<{ created: boolean }>(
        `INSERT INTO steward.access_roles (name, definition) VALUES ($1, $2)
           ON CONFLICT (name) DO UPDATE SET definition = EXCLUDED.definition RETURNING (xmax = 0) AS created`,
        [name, JSON.stringify(role)],
      );
      await query('SELECT pg_notify($1, $2)', [CHANNEL, 'roles']);
      return rows[0]?.created ?? false;
    });
  }

  async removeRole(name: string): Promise<boolean> {
    await this.ensureTables();
    return this.db.transaction(async (query) => {
      const rows = await query('DELETE FROM steward.access_roles WHERE name = $1 RETURNING name', [name]);
      await query('SELECT pg_notify($1, $2)', [CHANNEL, 'roles']);
      return rows.length > 0;
    });
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    await this.ensureTables();
    await this.db.query(
      `INSERT INTO steward.audit (at, who, token, method, route, path, project, project_schema, status)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        entry.at,
        entry.who,
        entry.token,
        entry.method,
        entry.route,
        entry.path,
        entry.project,
        entry.schema,
        entry.status,
      ],
    );
  }

  async audit(filter: AuditFilter): Promise<AuditEntry[]> {
    await this.ensureTables();
    const conditions: string[] = [];
    const values: unknown[] = [];
    const where = (condition: string, value: string | undefined): void => {
      if (value === undefined) return;
      values.push(value);
      conditions.push(`${condition} $${values.length}`);
    };
    where('project =', filter.project);
    where('project_schema =', filter.schema);
    where('who =', filter.who);
    where('at >=', filter.since);
    where('at <', filter.until);
    values.push(filter.limit);
    const rows = await this.db.query<Omit<AuditEntry, 'at' | 'schema'> & { at: Date; project_schema: string | null }>(
      `SELECT at, who, token, method, route, path, project, project_schema, status FROM steward.audit
         ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''} ORDER BY at DESC, id DESC LIMIT $${values.length}`,
      values,
    );
    return rows.map(({ at, project_schema, ...rest }) => ({ ...rest, at: at.toISOString(), schema: project_schema }));
  }

  async watch(changed: () => void): Promise<{ stop(): Promise<void> }> {
    return this.db.listen(CHANNEL, () => changed());
  }
}
