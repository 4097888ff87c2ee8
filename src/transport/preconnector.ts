import { createConnection, type Socket, type TcpNetConnectOpts } from 'node:net';

/** How long an unused spare connection stays open by default; well under HTTP servers' idle timeouts. */
const SPARE_IDLE_MS = 2_000;

interface Spare {
  socket: Socket;
  address: string;
  expiry: NodeJS.Timeout;
}

/**
 * Connections whose next one is open before it is asked for. `qgis_mapserver` answers HTTP/1.0 and
 * closes every connection, so a proxy that connects on demand pays a TCP handshake and an
 * event-loop turn on every map; the next connection is opened while QGIS Server draws the previous
 * one. A spare is opened only when a connection has just been handed out, and closed after two idle
 * seconds, so an idle API holds nothing open.
 */
export class Preconnector {
  private spare: Spare | undefined;
  private closed = false;

  constructor(private readonly spareIdleMs = SPARE_IDLE_MS) {}

  /** A connection to `options`' address: the spare if it goes there, else a new one. */
  connect(options: TcpNetConnectOpts): Socket {
    const address = `${options.host ?? 'localhost'}:${options.port}`;
    const socket = this.takeSpare(address) ?? createConnection(options);
    // Connecting costs a few hundred microseconds on a VM: done now, it would hold back the request
    // this socket is for; an immediate runs once the request has been written.
    setImmediate(() => this.replenish(options, address)).unref();
    return socket;
  }

  destroy(): void {
    this.closed = true;
    this.closeSpare();
  }

  /** Opens a spare to `address` unless one is already waiting there. */
  private replenish(options: TcpNetConnectOpts, address: string): void {
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

  private openSpare(options: TcpNetConnectOpts, address: string): Spare {
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
