/**
 * The registry of QGIS Server instances: a TCP server the steward_monitor plugin connects to.
 * A connection counts as an instance once it has sent a valid hello; anything else on the port
 * (garbage, oversized lines, a wrong token, silence) only ever costs that one socket.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';

import { NotFound } from '../errors.js';
import { reportedQgisVersion } from '../qgis/version.js';
import { type InstanceSummary, PluginConnection, REPLY_TIMEOUT_MS } from './connection.js';
import { LineDecoder, MAX_LINE_BYTES } from './lines.js';
import { Hello, type Method, type MethodResult, parseMessage, parseReply, PROTOCOL_VERSION } from './protocol.js';

export interface MonitorLogger {
  info(message: string): void;
  warn(message: string): void;
}

export interface RegistryOptions {
  /** Shared secret (STEWARD_MONITORING_TOKEN); when set, a hello must carry it. */
  token?: string;
  replyTimeoutMs?: number;
  /** How long a new connection may stay silent before its hello. */
  helloTimeoutMs?: number;
  /** Connections held at once before their hello (MAX_AWAITING_HELLO); the oldest goes for a new one. */
  maxAwaitingHello?: number;
  log?: MonitorLogger;
}

/** What another part of Steward does when an instance comes and goes (the fleet records it). */
export interface RegistryListener {
  registered(instance: InstanceSummary, hello: Hello): void;
  forgotten(id: string): void;
}

/** Where the instances are read: this process's registry, or the fleet of every Steward process. */
export interface InstanceDirectory {
  list(): InstanceSummary[] | Promise<InstanceSummary[]>;
  /** Sends `method` to the instance and waits for its result. */
  request<M extends Method>(id: string, method: M, params?: Record<string, unknown>): Promise<MethodResult<M>>;
}

const silent: MonitorLogger = { info: () => {}, warn: () => {} };

/**
 * Connections that have not said hello yet, held at once. A plugin says hello as it connects, so
 * only a stranger stays in this state long; the bound keeps a flood of them to a fixed cost.
 */
export const MAX_AWAITING_HELLO = 64;

/** The longest hello: a real one is a few hundred bytes; a stranger's first line costs no more than this. */
export const MAX_HELLO_BYTES = 16 * 1024;

export class InstanceRegistry implements InstanceDirectory {
  private readonly listeners: RegistryListener[] = [];
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** The sockets that have not said hello yet, oldest first. */
  private readonly awaitingHello = new Set<Socket>();
  private readonly instances = new Map<string, PluginConnection>();
  /** The QGIS version each trusted instance gave in its hello (`3.22.16`), by instance id. */
  private readonly versions = new Map<string, string>();
  private readonly log: MonitorLogger;

  constructor(private readonly options: RegistryOptions = {}) {
    this.log = options.log ?? silent;
  }

  async start(port: number, host = '0.0.0.0'): Promise<void> {
    if (this.server) throw new Error('the instance registry is already listening');
    const server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error) => this.log.warn(`monitoring socket error: ${error.message}`));
    this.server = server;
  }

  /** The port actually listened on (useful when started on port 0). */
  get port(): number {
    const address = this.server?.address();
    if (!address || typeof address === 'string') throw new Error('the instance registry is not listening');
    return address.port;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const connection of this.instances.values()) connection.closed();
    this.instances.clear();
    this.versions.clear();
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Tells `listener` of every instance that registers or disconnects from now on. */
  watch(listener: RegistryListener): void {
    this.listeners.push(listener);
  }

  /** Whether the instance is connected to this process. */
  has(id: string): boolean {
    return this.instances.has(id);
  }

  /** Sends `method` to an instance connected to this process and waits for its result. */
  request<M extends Method>(id: string, method: M, params?: Record<string, unknown>): Promise<MethodResult<M>> {
    return this.instance(id).request(method, params);
  }

  list(): InstanceSummary[] {
    return [...this.instances.values()].map((connection) => connection.summary());
  }

  /**
   * The QGIS versions (`3.22.16`) the trusted instances reported, oldest registration first:
   * those that presented STEWARD_MONITORING_TOKEN. Without a token any program reaching the port
   * registers, so none is trusted to say which QGIS Server Steward administers.
   */
  qgisVersions(): string[] {
    return [...this.versions.values()];
  }

  metadata(id: string): Promise<MethodResult<'metadata'>> {
    return this.request(id, 'metadata');
  }

  logs(id: string): Promise<MethodResult<'logs'>> {
    return this.request(id, 'logs');
  }

  stats(id: string): Promise<MethodResult<'stats'>> {
    return this.request(id, 'stats');
  }

  /**
   * Has every registered instance drop the project `map` (a MAP value) from its project cache
   * before its next request, and waits for each to queue it, within the reply timeout. Never
   * throws: an instance that fails or stays silent is logged, and may serve the old project.
   */
  async invalidateProject(map: string): Promise<void> {
    await Promise.all(
      [...this.instances.values()].map((connection) =>
        connection.request('invalidate', { map }).catch((error: unknown) => {
          const reason = error instanceof Error ? error.message : String(error);
          this.log.warn(`instance ${connection.id} may still serve the old ${map}: ${reason}`);
        }),
      ),
    );
  }

  private instance(id: string): PluginConnection {
    const connection = this.instances.get(id);
    if (!connection)
      throw new NotFound(`No QGIS Server instance with id ${id} is registered.`, { code: 'instance_not_found' });
    return connection;
  }

  private accept(socket: Socket): void {
    this.makeRoomForHello();
    this.sockets.add(socket);
    this.awaitingHello.add(socket);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    const ip = displayIp(socket.remoteAddress);
    let connection: PluginConnection | undefined;
    const helloTimer = setTimeout(
      () => this.refuse(socket, ip, 'no hello in time'),
      this.options.helloTimeoutMs ?? 10_000,
    );
    const decoder = new LineDecoder(
      {
        line: (text) => {
          if (socket.destroyed) return;
          if (connection) return this.onReply(connection, text);
          clearTimeout(helloTimer);
          this.awaitingHello.delete(socket);
          connection = this.register(socket, ip, text);
          decoder.maxBytes = MAX_LINE_BYTES;
        },
        overflow: () => {
          if (!connection) return this.refuse(socket, ip, `first line longer than ${MAX_HELLO_BYTES / 1024} KiB`);
          this.log.warn(`instance ${connection.id} sent a line longer than 1 MiB; dropped`);
        },
      },
      MAX_HELLO_BYTES,
    );
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    socket.on('error', () => {}); // 'close' follows and does the cleanup
    socket.on('close', () => {
      clearTimeout(helloTimer);
      this.sockets.delete(socket);
      this.awaitingHello.delete(socket);
      if (connection) this.forget(connection);
    });
  }

  /** Closes the oldest connection still without a hello when a new one would pass the bound. */
  private makeRoomForHello(): void {
    if (this.awaitingHello.size < (this.options.maxAwaitingHello ?? MAX_AWAITING_HELLO)) return;
    const oldest = this.awaitingHello.values().next();
    if (oldest.done) return;
    this.awaitingHello.delete(oldest.value);
    this.refuse(oldest.value, displayIp(oldest.value.remoteAddress), 'too many connections without a hello');
  }

  /** Checks the hello; returns the new instance, or undefined after closing the socket. */
  private register(socket: Socket, ip: string, text: string): PluginConnection | undefined {
    const hello = parseMessage(Hello, text);
    if (!hello) return this.refuse(socket, ip, 'first message is not a hello');
    if (hello.version !== PROTOCOL_VERSION) return this.refuse(socket, ip, `protocol version ${hello.version}`);
    if (!tokenMatches(this.options.token, hello.token)) return this.refuse(socket, ip, 'wrong token');
    const connection = new PluginConnection(this.newId(), ip, socket, this.options.replyTimeoutMs ?? REPLY_TIMEOUT_MS);
    this.instances.set(connection.id, connection);
    for (const listener of this.listeners) listener.registered(connection.summary(), hello);
    this.recordVersion(connection.id, hello.qgis_version);
    this.log.info(
      `instance ${connection.id} registered from ${ip} (${hello.hostname ?? '?'}, pid ${hello.pid ?? '?'})`,
    );
    return connection;
  }

  private recordVersion(id: string, reported: string | undefined): void {
    if (reported === undefined) return;
    const version = reportedQgisVersion(reported);
    if (version === undefined) {
      this.log.warn(
        `instance ${id} reported ${JSON.stringify(reported.slice(0, 40))} as its QGIS version, not one of a QGIS Server Steward supports; ignored`,
      );
    } else if (this.options.token) {
      this.versions.set(id, version);
    }
  }

  private onReply(connection: PluginConnection, text: string): void {
    const reply = parseReply(text);
    if (reply) connection.receive(reply);
    else this.log.warn(`instance ${connection.id} sent a malformed message; dropped`);
  }

  private forget(connection: PluginConnection): void {
    connection.closed();
    if (this.instances.get(connection.id) !== connection) return;
    this.instances.delete(connection.id);
    for (const listener of this.listeners) listener.forgotten(connection.id);
    this.versions.delete(connection.id);
    this.log.info(`instance ${connection.id} disconnected`);
  }

  private refuse(socket: Socket, ip: string, reason: string): undefined {
    this.log.warn(`monitoring connection from ${ip} refused: ${reason}`);
    socket.destroy();
    return undefined;
  }

  private newId(): string {
    for (;;) {
      const id = randomBytes(4).toString('hex');
      if (!this.instances.has(id)) return id;
    }
  }
}

function tokenMatches(expected: string | undefined, given: string | undefined): boolean {
  if (!expected) return true;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(expected), digest(given ?? ''));
}

/** IPv4 peers of a dual-stack socket appear as `::ffff:a.b.c.d`. */
function displayIp(address: string | undefined): string {
  if (!address) return '';
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}
