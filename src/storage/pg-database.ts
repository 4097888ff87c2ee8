import { createHash } from 'node:crypto';

import {
  Client,
  type ClientConfig,
  DatabaseError,
  escapeIdentifier,
  Pool,
  type PoolClient,
  type QueryResultRow,
} from 'pg';

import { ConfigError } from '../config.js';
import { InsufficientStorage, ServiceUnavailable } from '../errors.js';
import { describeConnection, resolveService } from './pg-service.js';

const CONNECT_TIMEOUT_MS = 5_000;
const STATEMENT_TIMEOUT_MS = 30_000;
/** How long a writer waits for another process's lock on the same project. */
const LOCK_WAIT_MS = 60_000;
/** How long a lost LISTEN session waits before connecting again. */
const LISTEN_RETRY_MS = 1_000;

/** The database is down, refuses us or is too slow: the request may succeed later. */
export class DatabaseUnavailable extends ServiceUnavailable {
  constructor(message: string) {
    super(message, {
      clientMessage: 'the project database is not available now; try again later',
      code: 'database_unavailable',
    });
  }
}

/** SQLSTATE classes: connection, authorization, resources, lock not available, operator intervention. */
const UNAVAILABLE_CLASSES = ['08', '28', '53', '55', '57'];

/** SQLSTATE disk_full: the server could not extend a file. */
const DISK_FULL = '53100';

/** A session taken from a pool; release it once, with the error that makes it unusable if any. */
interface Session {
  client: PoolClient;
  release(error?: Error): void;
}

/** Whether an error thrown by a pg call is the server's state rather than the statement's fault. */
function isUnavailable(error: unknown): boolean {
  // pg reports a lost or timed-out connection as a plain Error, the server's own refusals as DatabaseError.
  if (!(error instanceof DatabaseError)) return true;
  return UNAVAILABLE_CLASSES.includes(error.code?.slice(0, 2) ?? '');
}

export type Query = <Row extends QueryResultRow>(sql: string, values?: unknown[]) => Promise<Row[]>;

/** A signed 64-bit advisory lock key for a text, as pg_advisory_lock takes it. */
function advisoryKey(text: string): string {
  return createHash('sha256').update(text).digest().readBigInt64BE(0).toString();
}

/**
 * The PostgreSQL database of a connection service: a pool for queries and a separate one for the
 * sessions that hold advisory locks, so lock holders can never starve the queries they wait on.
 */
export class PostgresDatabase {
  private constructor(
    private readonly name: string,
    private readonly pool: Pool,
    private readonly lockPool: Pool,
    private readonly settings: ClientConfig,
  ) {}

  /** Connects to the named service; throws ConfigError when it is unknown or cannot be reached. */
  static async connect(service: string, serviceFiles: readonly string[]): Promise<PostgresDatabase> {
    const settings = resolveService(service, serviceFiles);
    const common: ClientConfig = { ...settings, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true };
    const pool = new Pool({ ...common, statement_timeout: STATEMENT_TIMEOUT_MS, max: 10 });
    const lockPool = new Pool({ ...common, lock_timeout: LOCK_WAIT_MS, max: 10 });
    const database = new PostgresDatabase(
      `PostgreSQL service "${service}" (${describeConnection(settings)})`,
      pool,
      lockPool,
      common,
    );
    for (const each of [pool, lockPool]) each.on('error', () => undefined); // an idle client lost: the pool replaces it
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      await database.close();
      throw new ConfigError(`cannot connect to ${database.name}: ${(error as Error).message}`);
    }
    return database;
  }

  private translate(error: unknown): unknown {
    if (error instanceof DatabaseError && error.code === DISK_FULL) {
      return new InsufficientStorage(`the disk of ${this.name} is full: ${error.message}`, {
        clientMessage: "insufficient storage: the project database server's disk is full",
      });
    }
    if (!isUnavailable(error)) return error;
    return new DatabaseUnavailable(`${this.name} is not available: ${(error as Error).message}`);
  }

  /** A query function on `target` whose connection failures become DatabaseUnavailable. */
  private queryOn(target: Pool | PoolClient): Query {
    return async <Row extends QueryResultRow>(sql: string, values: unknown[] = []) => {
      try {
        return (await target.query<Row>(sql, values)).rows;
      } catch (error) {
        throw this.translate(error);
      }
    };
  }

  query<Row extends QueryResultRow>(sql: string, values: unknown[] = []): Promise<Row[]> {
    return this.queryOn(this.pool)<Row>(sql, values);
  }

  /** Runs `work` in a transaction, committed when it returns and rolled back when it throws. */
  async transaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    const session = await this.checkout(this.pool);
    const query = this.queryOn(session.client);
    try {
      await query('BEGIN');
      const result = await work(query);
      await query('COMMIT');
      session.release();
      return result;
    } catch (error) {
      await session.client.query('ROLLBACK').then(
        () => session.release(),
        (failure: Error) => session.release(failure),
      );
      throw error;
    }
  }

  /** Runs `work` holding a session advisory lock on `key`, which any process using the database respects. */
  async withAdvisoryLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const lockKey = advisoryKey(key);
    const session = await this.checkout(this.lockPool);
    try {
      await session.client.query('SELECT pg_advisory_lock($1::bigint)', [lockKey]);
    } catch (error) {
      session.release(error as Error);
      throw this.translate(error);
    }
    try {
      return await work();
    } finally {
      // Should the unlock fail, closing the session is what frees the lock.
      await session.client.query('SELECT pg_advisory_unlock($1::bigint)', [lockKey]).then(
        () => session.release(),
        (failure: Error) => session.release(failure),
      );
    }
  }

  /**
   * A function that runs `ddl` (`CREATE ... IF NOT EXISTS`) on its first call, under an advisory
   * lock on `key` so that processes starting at once take turns, and again after a failure.
   */
  createOnce(key: string, ddl: string): () => Promise<void> {
    let ready: Promise<void> | undefined;
    return () => {
      ready ??= this.withAdvisoryLock(key, async () => {
        await this.query(ddl);
      }).catch((error: unknown) => {
        ready = undefined;
        throw error;
      });
      return ready;
    };
  }

  /** Takes an advisory lock held until the transaction that `query` runs in ends. */
  static async lockForTransaction(query: Query, key: string): Promise<void> {
    await query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryKey(key)]);
  }

  /**
   * Hears every NOTIFY on `channel` on a session of its own, opened again after it is lost (what is
   * notified in between is missed). `stop` closes it for good.
   */
  async listen(channel: string, onMessage: (payload: string) => void): Promise<{ stop(): Promise<void> }> {
    let client: Client | undefined;
    let stopped = false;
    let retrying = false;
    const retry = (): void => {
      if (stopped || retrying) return;
      retrying = true;
      setTimeout(() => {
        retrying = false;
        open().catch(retry);
      }, LISTEN_RETRY_MS);
    };
    const open = async (): Promise<void> => {
      const session = new Client(this.settings);
      session.on('notification', (message) => {
        if (message.channel === channel) onMessage(message.payload ?? '');
      });
      session.on('error', () => {
        session.end().catch(() => undefined);
        retry();
      });
      await session.connect();
      await session.query(`LISTEN ${escapeIdentifier(channel)}`);
      client = session;
      if (stopped) await session.end();
    };
    try {
      await open();
    } catch (error) {
      throw this.translate(error);
    }
    return {
      async stop() {
        stopped = true;
        await client?.end().catch(() => undefined);
      },
    };
  }

  private async checkout(pool: Pool): Promise<Session> {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw this.translate(error);
    }
    // A session lost between two queries emits 'error', which would end the process unheard;
    // its next query fails anyway and says why.
    const ignore = (): void => undefined;
    client.on('error', ignore);
    return {
      client,
      release(error) {
        client.removeListener('error', ignore);
        client.release(error);
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.lockPool.end()]);
  }
}
