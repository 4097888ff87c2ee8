import { type Socket } from 'node:net';
import { type Readable } from 'node:stream';

import { BadGateway, GatewayTimeout, StewardError } from '../errors.js';
import { readHead } from './http-head.js';
import { Preconnector } from './preconnector.js';

/** How long QGIS Server may take to answer before the API gives up with a 504. */
export const QGIS_SERVER_TIMEOUT_MS = 60_000;

export interface QgisAnswer {
  status: number;
  /** The headers, names in lower case. */
  headers: Map<string, string>;
  /** The body: whole when it came with the head, as a small map's does; otherwise as it streams in. */
  body: Buffer | Readable;
}

/** A GET of one URL, made ready once and sent again at each call; `onSent` hears when the request has been written. */
export type PreparedGet = (onSent?: () => void) => Promise<QgisAnswer>;

/** A request's body, which makes it a POST. */
export interface QgisBody {
  /** Its media type, the Content-Type header. */
  type: string;
  bytes: Buffer;
}

/** Parameters of a request to QGIS Server besides its URL's (Steward's rules for the caller). */
export type QgisParams = ReadonlyArray<readonly [string, string]>;

/** How the API sends its GETs to QGIS Server: over HTTP, or over FastCGI to its processes. */
export interface QgisClient {
  /**
   * The GET of `url` (a URL of STEWARD_QGISSERVER_URL's server), ready to be sent; `params` go as
   * FastCGI parameters, which only FastCGI carries: over HTTP they are not sent. With `body`, a
   * POST of it instead.
   */
  prepare(url: string, params?: QgisParams, body?: QgisBody): PreparedGet;
  close(): void;
}

/** GETs over HTTP to STEWARD_QGISSERVER_URL's server, each connection opened while the last one was answered. */
export class HttpQgisClient implements QgisClient {
  private readonly connections = new Preconnector();

  prepare(url: string, _params?: QgisParams, body?: QgisBody): PreparedGet {
    const request = qgisRequest(url, body);
    return (onSent) => qgisGet(request, this.connections, onSent);
  }

  close(): void {
    this.connections.destroy();
  }
}

/** A GET of one URL, ready to be sent again and again: where it goes, and its request's bytes. */
export interface QgisRequest {
  address: { host: string; port: number };
  bytes: Buffer;
}

/** The request for a GET of `url` (a POST of `body` when given), made once for every time it is sent. */
export function qgisRequest(url: string, body?: QgisBody): QgisRequest {
  const target = new URL(url);
  const method = body === undefined ? 'GET' : 'POST';
  const head = `${method} ${target.pathname}${target.search} HTTP/1.0\r\nHost: ${target.host}\r\n`;
  const content = body === undefined ? '' : `Content-Type: ${body.type}\r\nContent-Length: ${body.bytes.length}\r\n`;
  return {
    address: { host: target.hostname.replace(/^\[|\]$/g, ''), port: Number(target.port || 80) },
    bytes: Buffer.concat([Buffer.from(`${head}${content}\r\n`, 'latin1'), body?.bytes ?? Buffer.alloc(0)]),
  };
}

/**
 * Sends a GET to QGIS Server as HTTP/1.0 over a plain socket. A server answers HTTP/1.0 without
 * chunks and closes the connection after it, so the body is whatever follows the head, and
 * nothing of node:http's client (request and response objects, header validation, the agent, a
 * second stream over the socket) sits between QGIS Server's bytes and the API's reply: that
 * machinery cost more than the 2% of the smallest map's time the API may add.
 */
export function qgisGet(
  url: string | QgisRequest,
  connections: Preconnector,
  onSent?: () => void,
): Promise<QgisAnswer> {
  const request = typeof url === 'string' ? qgisRequest(url) : url;
  const socket = connections.connect(request.address);
  socket.setTimeout(QGIS_SERVER_TIMEOUT_MS, () =>
    socket.destroy(new GatewayTimeout('QGIS Server did not answer in time', { code: 'qgis_server_timeout' })),
  );
  // The body's reader listens for errors; until it does, and after it stops, none may go unheard.
  socket.on('error', () => undefined);
  socket.write(request.bytes, (error) => {
    if (!error) onSent?.();
  });
  return new Promise((resolve, reject) => {
    let received: Buffer = Buffer.alloc(0);
    const fail = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    const onError = (error: Error): void => fail(error instanceof StewardError ? error : unreachable(error));
    const onEnd = (): void => fail(new BadGateway('QGIS Server closed the connection without an answer'));
    const onData = (chunk: Buffer): void => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const head = readHead(received);
      if (head === undefined) return;
      if (head === null) return fail(new BadGateway('QGIS Server answered something other than HTTP'));
      socket.off('data', onData).off('error', onError).off('end', onEnd);
      const { status, headers, size: headBytes } = head;
      const length = contentLength(headers);
      if (length !== undefined && received.length - headBytes >= length) {
        // The connection flows on, unread, to QGIS Server's close, which ends it.
        return resolve({ status, headers, body: received.subarray(headBytes, headBytes + length) });
      }
      socket.pause();
      if (headBytes < received.length) socket.unshift(received.subarray(headBytes));
      if (length !== undefined) guardLength(socket, length, headBytes);
      resolve({ status, headers, body: socket });
    };
    socket.on('data', onData).on('error', onError).on('end', onEnd);
  });
}

/** The 502 for a connection to QGIS Server that failed with `error`. */
export function unreachable(error: Error): BadGateway {
  return new BadGateway(`QGIS Server cannot be reached: ${error.message}`, {
    clientMessage: "QGIS Server cannot be reached: Steward's log says why",
    code: 'qgis_server_unreachable',
  });
}

/** The Content-Length of an answer, when it gives a valid one. */
export function contentLength(headers: Map<string, string>): number | undefined {
  const length = Number(headers.get('content-length') ?? Number.NaN);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/** A body that ends short of its Content-Length fails, as QGIS Server failing mid-answer. */
function guardLength(socket: Socket, length: number, headBytes: number): void {
  // Heard before the body's readers hear of the end (this listener is the first), so that they
  // take the answer as failed rather than complete.
  socket.once('end', () => {
    if (socket.bytesRead - headBytes >= length) return;
    socket.emit('error', new BadGateway('QGIS Server ended its answer early'));
    socket.destroy();
  });
}
