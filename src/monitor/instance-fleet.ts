/**
 * The fleet: several Steward processes sharing one PostgreSQL database, each seeing every QGIS
 * Server instance whichever process it registered with. PostgreSQL carries it all:
 *
 * - `steward.instances` holds one row per registered instance: the process (node) it is connected
 *   to, its address, its hello, when it registered and when its process last vouched for it. Each
 *   process refreshes its rows every few seconds; rows not refreshed for STALE_SECONDS belong to a
 *   process that died and are no longer listed.
 * - The `steward_fleet` channel carries questions from one process to another: a request for an
 *   instance (metadata, logs, stats), answered by the process holding its connection, and a project
 *   change, which the process relays to its own instances. The answer is written to
 *   `steward.fleet_replies` (a NOTIFY payload is limited to 8000 bytes; logs are not) and a NOTIFY
 *   names it.
 */
import { randomBytes } from 'node:crypto';

import { type Static, Type } from '@sinclair/typebox';

import { BadGateway, type ErrorCode, GatewayTimeout, NotFound, StewardError } from '../errors.js';
import { type PostgresDatabase } from '../storage/pg-database.js';
import { REPLY_TIMEOUT_MS } from './connection.js';
import { type InstanceSummary } from './connection.js';
import { type Hello, isResultOf, type Method, type MethodResult, methodResults, parseMessage } from './protocol.js';
import { type InstanceDirectory, type InstanceRegistry, type MonitorLogger } from './registry.js';

export const FLEET_CHANNEL = 'steward_fleet';
const HEARTBEAT_MS = 3_000;
/** A row its process has not refreshed for this long belongs to a process that is gone. */
export const STALE_SECONDS = 10;
/** Another process answers within its own reply timeout, plus the round trips through the database. */
const ASK_TIMEOUT_MS = REPLY_TIMEOUT_MS + 2_000;

const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS steward;
CREATE TABLE IF NOT EXISTS steward.instances (
  id text PRIMARY KEY,
  node text NOT NULL,
  ip text NOT NULL,
  hello jsonb NOT NULL,
  registered_at timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now()
);
CREATE UNLOGGED TABLE IF NOT EXISTS steward.fleet_replies (
  id text PRIMARY KEY,
  body jsonb NOT NULL,
  created timestamptz NOT NULL DEFAULT now()
);`;
const FRESH = `last_seen > now() - make_interval(secs => ${STALE_SECONDS})`;

const Question = Type.Union([
  Type.Object({
    op: Type.Literal('request'),
    instance: Type.String(),
    method: Type.String(),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
  Type.Object({ op: Type.Literal('invalidate'), map: Type.String() }),
]);
type Question = Static<typeof Question>;
const Message = Type.Union([
  Type.Object({
    kind: Type.Literal('ask'),
    to: Type.String(),
    from: Type.String(),
    id: Type.String(),
    question: Question,
  }),
  Type.Object({ kind: Type.Literal('answer'), to: Type.String(), id: Type.String() }),
]);
type Message = Static<typeof Message>;
type Answer = { result: unknown } | { status: number; error: string; code?: ErrorCode };

interface Waiting {
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

interface LocalInstance {
  id: string;
  ip: string;
  hello: Hello;
}

function isMethod(name: string): name is Method {
  return Object.hasOwn(methodResults, name);
}

export class InstanceFleet implements InstanceDirectory {
  /** This process in the fleet. */
  readonly node = randomBytes(8).toString('hex');
  private readonly local = new Map<string, LocalInstance>();
  private readonly waiting = new Map<string, Waiting>();
  private writes: Promise<void> = Promise.resolve();
  private heartbeat: NodeJS.Timeout | undefined;
  private listening: { stop(): Promise<void> } | undefined;

  private constructor(
    private readonly db: PostgresDatabase,
    private readonly registry: InstanceRegistry,
    private readonly log: MonitorLogger,
  ) {}

  /** Joins the fleet: records the registry's instances from now on and answers the other processes. */
  static async join(db: PostgresDatabase, registry: InstanceRegistry, log: MonitorLogger): Promise<InstanceFleet> {
    await db.withAdvisoryLock('steward.instances', () => db.query(SCHEMA));
    const fleet = new InstanceFleet(db, registry, log);
    fleet.listening = await db.listen(FLEET_CHANNEL, (payload) => fleet.hear(payload));
    registry.watch({
      registered: (instance, hello) => fleet.registered(instance, hello),
      forgotten: (id) => fleet.forgotten(id),
    });
    fleet.heartbeat = setInterval(() => fleet.write(() => fleet.refresh()), HEARTBEAT_MS);
    fleet.heartbeat.unref();
    return fleet;
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.listening?.stop();
    for (const [id, waiting] of this.waiting) this.settle(id, waiting).reject(new BadGateway('Steward is stopping.'));
    this.local.clear();
    this.write(() => this.db.query('DELETE FROM steward.instances WHERE node = $1', [this.node]));
    await this.writes;
  }

  async list(): Promise<InstanceSummary[]> {
    return this.db.query<InstanceSummary>(
      `SELECT id, ip, floor(extract(epoch FROM now() - registered_at))::integer AS binded,
              to_char(registered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS registered_at
         FROM steward.instances WHERE ${FRESH} ORDER BY registered_at, id`,
    );
  }

  /** Has every instance of every process drop the project `map`; never throws (see the registry's). */
  async invalidateProject(map: string): Promise<void> {
    const others = await this.db
      .query<{ node: string }>(`SELECT DISTINCT node FROM steward.instances WHERE ${FRESH} AND node <> $1`, [this.node])
      .catch((error: unknown) => {
        this.log.warn(`cannot tell the other Steward processes that ${map} changed: ${String(error)}`);
        return [];
      });
    await Promise.all([
      this.registry.invalidateProject(map),
      ...others.map(({ node }) =>
        this.ask(node, { op: 'invalidate', map }).catch((error: unknown) => {
          this.log.warn(`the instances of Steward process ${node} may still serve the old ${map}: ${String(error)}`);
        }),
      ),
    ]);
  }

  async request<M extends Method>(id: string, method: M, params?: Record<string, unknown>): Promise<MethodResult<M>> {
    if (this.registry.has(id)) return this.registry.request(id, method, params);
    const [row] = await this.db.query<{ node: string }>(
      `SELECT node FROM steward.instances WHERE id = $1 AND ${FRESH}`,
      [id],
    );
    if (!row)
      throw new NotFound(`No QGIS Server instance with id ${id} is registered.`, { code: 'instance_not_found' });
    const result = await this.ask(row.node, { op: 'request', instance: id, method, ...(params && { params }) });
    if (isResultOf(method, result)) return result;
    throw new BadGateway(`Instance ${id} sent a malformed "${method}" result.`);
  }

  /** Sends `question` to the process `node` and waits for its answer. */
  private ask(node: string, question: Question): Promise<unknown> {
    const id = randomBytes(12).toString('hex');
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new GatewayTimeout(`Steward process ${node} did not answer within ${ASK_TIMEOUT_MS / 1000} seconds.`));
      }, ASK_TIMEOUT_MS);
      this.waiting.set(id, { resolve, reject, timer });
      this.notify({ kind: 'ask', to: node, from: this.node, id, question }).catch((error: unknown) => {
        this.settle(id, { resolve, reject, timer }).reject(error as Error);
      });
    });
  }

  private notify(message: Message): Promise<unknown> {
    return this.db.query('SELECT pg_notify($1, $2)', [FLEET_CHANNEL, JSON.stringify(message)]);
  }

  private hear(payload: string): void {
    const message = parseMessage(Message, payload);
    if (!message || message.to !== this.node) return;
    const work = message.kind === 'ask' ? this.answer(message) : this.collect(message.id);
    work.catch((error: unknown) => this.log.warn(`fleet message ${message.id} failed: ${String(error)}`));
  }

  private async answer(message: Extract<Message, { kind: 'ask' }>): Promise<void> {
    const body = await this.outcome(message.question);
    await this.db.query('INSERT INTO steward.fleet_replies (id, body) VALUES ($1, $2)', [
      message.id,
      JSON.stringify(body),
    ]);
    await this.notify({ kind: 'answer', to: message.from, id: message.id });
  }

  private async outcome(question: Question): Promise<Answer> {
    try {
      if (question.op === 'invalidate') {
        await this.registry.invalidateProject(question.map);
        return { result: true };
      }
      if (!isMethod(question.method)) return { status: 400, error: `no method "${question.method}"` };
      return { result: await this.registry.request(question.instance, question.method, question.params) };
    } catch (error) {
      if (error instanceof StewardError) return { status: error.status, error: error.message, code: error.code };
      return { status: 502, error: String(error) };
    }
  }

  private async collect(id: string): Promise<void> {
    const [row] = await this.db.query<{ body: Answer }>(
      'DELETE FROM steward.fleet_replies WHERE id = $1 RETURNING body',
      [id],
    );
    const waiting = this.waiting.get(id);
    if (!row || !waiting) return;
    this.settle(id, waiting);
    if ('result' in row.body) waiting.resolve(row.body.result);
    else waiting.reject(new StewardError(row.body.status, row.body.error, { code: row.body.code }));
  }

  private settle(id: string, waiting: Waiting): Waiting {
    clearTimeout(waiting.timer);
    this.waiting.delete(id);
    return waiting;
  }

  private registered(instance: InstanceSummary, hello: Hello): void {
    this.local.set(instance.id, { id: instance.id, ip: instance.ip, hello });
    this.write(() => this.refresh());
  }

  private forgotten(id: string): void {
    this.local.delete(id);
    this.write(() => this.db.query('DELETE FROM steward.instances WHERE id = $1', [id]));
  }

  /** Database writes in the order of the events, each failure logged: the next heartbeat repairs it. */
  private write(work: () => Promise<unknown>): void {
    this.writes = this.writes.then(work).then(
      () => undefined,
      (error: unknown) => this.log.warn(`cannot record this process's instances in the database: ${String(error)}`),
    );
  }

  /** Records this process's instances as seen now, and forgets what is long gone. */
  private async refresh(): Promise<void> {
    const rows = [...this.local.values()];
    if (rows.length > 0) {
      await this.db.query(
        `INSERT INTO steward.instances (id, node, ip, hello)
           SELECT r.id, $1, r.ip, r.hello FROM jsonb_to_recordset($2::jsonb) AS r(id text, ip text, hello jsonb)
           ON CONFLICT (id) DO UPDATE SET node = EXCLUDED.node, last_seen = now()`,
        [this.node, JSON.stringify(rows)],
      );
    }
    await this.db.query(`DELETE FROM steward.instances WHERE last_seen < now() - interval '1 minute'`);
    await this.db.query(`DELETE FROM steward.fleet_replies WHERE created < now() - interval '1 minute'`);
  }
}
