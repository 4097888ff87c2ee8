import { Agent, type ClientRequestArgs } from 'node:http';
import { createConnection, type NetConnectOpts, type Socket } from 'node:net';

/** How long an unused spare connection stays open by default; well under HTTP servers' idle timeouts. */
const SPARE_IDLE_MS = 2_000;

interface Spare {
  socket: Socket;
  address: string;
  expiry: NodeJS.Timeout;
}

/**
 * An HTTP agent whose next connection is open before it is asked for. `qgis_mapserver` answers
 * HTTP/1.0 and closes every connection, so a proxy that connects on demand pays a TCP handshake and
 * an event-loop turn on every map; this agent connects while QGIS Server is drawing the previous one.
 * A spare is opened only when a connection has just been handed out, and closed after two idle
 * seconds, so an idle API holds nothing open. Servers that keep connections alive reuse them as
 * with any keep-alive agent, and the spare simply expires.
 */
export class PreconnectingAgent extends Agent {
  private spare: Spare | undefined;
  private closed = false;

  constructor(private readonly spareIdleMs = SPARE_IDLE_MS) {
    super({ keepAlive: true });
  }

  override createConnection(options: ClientRequestArgs): Socket {
    const connectOptions = options as NetConnectOpts;
    const address = `${options.host ?? 'localhost'}:${options.port ?? 80}`;
    const socket = this.takeSpare(address) ?? createConnection(connectOptions);
    // Connecting costs a few hundred microseconds on a VM: done now, it would hold back the request
    // this socket is for; an immediate runs once the request has been written.
    setImmediate(() => this.replenish(connectOptions, address)).unref();
    return socket;
  }

  override destroy(): void {
    this.closed = true;
    this.closeSpare();
    super.destroy();
  }

  /** Opens a spare to `address` unless one is already waiting there. */
  private replenish(options: NetConnectOpts, address: string): void {
    if (this.closed || (this.spare?.address === address && !this.spare.socket.destroyed)) return;
    this.closeSpare();
    this.spare = this.openSpare(options, address);
  }

  /** The spare, if it connects to `address` and is still usable; any other spare is closed. */
  private takeSpare(address: string): Socket | undefined {
    const spare = this.spare;
    if (!spare || spare.address !== address || spare.socket.destroyed) {
      this.closeSpare();
      return undefined;
    }
    clearTimeout(spare.expiry);
    this.spare = undefined;
    return spare.socket.off('error', ignoreError).ref();
  }

  private openSpare(options: NetConnectOpts, address: string): Spare {
    // A spare that fails is not used: the request that would have taken it connects anew.
    const socket = createConnection(options).on('error', ignoreError).unref();
    return { socket, address, expiry: setTimeout(() => this.closeSpare(), this.spareIdleMs).unref() };
  }

  private closeSpare(): void {
    if (!this.spare) return;
    clearTimeout(this.spare.expiry);
    this.spare.socket.destroy();
    this.spare = undefined;
  }
}

function ignoreError(): void {}
