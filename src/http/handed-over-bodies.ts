/**
 * Upload bodies read off the event loop (docs/publishing.md): once an upload route has admitted a
 * request whose body declares its length, the HTTP server stops reading its connection, and a
 * worker thread reads the body from the socket (services/threaded-receipt.ts), so that no work per
 * byte of it falls on the event loop the other requests wait for. Every answer to such a request
 * closes the connection, since the server's parser never sees the body end; before it closes, the
 * connection is read again and what still arrives is dropped (streamed-uploads.ts lingers).
 *
 * This reaches into Node's HTTP server: the socket's stream handle (its descriptor, its reads
 * stopped and started) and the connection's parser (taken out of the requests Node times out once
 * the body is read, as it is when Node reads a body itself). Where they are not as expected, or
 * the addon that gives the thread a descriptor of its own is not built, the server reads the body
 * as any other.
 */
import { type IncomingMessage } from 'node:http';
import { type Socket } from 'node:net';
import { type Readable } from 'node:stream';

import { type FastifyReply, type FastifyRequest } from 'fastify';

import { type HandedOverBody } from '../services/threaded-receipt.js';
import { cutShort } from '../storage/received-file.js';
import { socketBodiesReadable } from '../storage/socket-body.js';

/** The libuv stream of a socket, as Node's `net` drives it. */
interface StreamHandle {
  fd: number;
  reading?: boolean;
  readStart(): number;
  readStop(): number;
}

interface HandOver {
  handle: StreamHandle;
  /** The body's bytes the server had read before. */
  head: Buffer;
  /** The bytes of it still on the socket. */
  length: number;
  /** When the request began (Date.now()). */
  startedAt: number;
  /** The deadlines of bodies, once body-timeouts.ts has given them. */
  deadlines?: { idleMs: number; totalMs: number };
}

const handedOver = new WeakMap<IncomingMessage, HandOver>();

function streamHandle(socket: Socket): StreamHandle | undefined {
  const handle = (socket as unknown as { _handle?: Partial<StreamHandle> | null })._handle;
  const usable =
    typeof handle?.fd === 'number' &&
    handle.fd >= 0 &&
    typeof handle.readStart === 'function' &&
    typeof handle.readStop === 'function';
  return usable ? (handle as StreamHandle) : undefined;
}

/**
 * Stops the server's reads of the connection. Node starts them again whenever the request's stream
 * is read or resumed: until they are given back, its calls do nothing.
 */
function stopReading(handle: StreamHandle): void {
  handle.readStop();
  handle.reading = false;
  handle.readStart = () => 0;
}

/** Gives the connection's reads back to the server. */
function restartReading(handle: StreamHandle): void {
  if (!Object.hasOwn(handle, 'readStart')) return;
  delete (handle as Partial<StreamHandle>).readStart;
  handle.reading = true;
  handle.readStart();
}

function drained(stream: Readable): Buffer {
  const chunks: Buffer[] = [];
  for (let chunk: unknown = stream.read(); chunk !== null; chunk = stream.read()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * An upload route's `onRequest`, after `admitUpload`: hands the body over when it declares its
 * length and has not arrived whole with the headers; `linger` is what makes every answer close the
 * connection as it should.
 */
export function handOverBodies(linger: (request: FastifyRequest, reply: FastifyReply) => void) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const { raw } = request;
    const length = Number(request.headers['content-length']);
    const handle = streamHandle(raw.socket);
    const sized = request.headers['transfer-encoding'] === undefined && Number.isSafeInteger(length) && length > 0;
    if (!handle || !sized || !socketBodiesReadable()) return;
    stopReading(handle);
    // The read that brought the headers pushes the body's bytes it brought once this hook has begun.
    await new Promise((resolve) => setImmediate(resolve));
    if (raw.complete || raw.socket.destroyed) {
      restartReading(handle);
      return;
    }
    const head = drained(raw);
    handedOver.set(raw, { handle, head, length: length - head.length, startedAt: Date.now() - reply.elapsedTime });
    linger(request, reply);
  };
}

/** Whether the request's body was handed over: body-timeouts.ts then gives its deadlines rather than guarding it. */
export function isHandedOver(request: FastifyRequest): boolean {
  return handedOver.has(request.raw);
}

/** The deadlines the thread reading the body holds it to (milliseconds). */
export function setBodyDeadlines(request: FastifyRequest, idleMs: number, totalMs: number): void {
  const over = handedOver.get(request.raw);
  if (over) over.deadlines = { idleMs, totalMs };
}

/** Gives the connection's reads back to the server, once the request is answered: what arrives is dropped. */
export function giveBackReads(raw: IncomingMessage): void {
  const over = handedOver.get(raw);
  if (over && !raw.socket.destroyed) restartReading(over.handle);
}

/** The body left on its socket for a thread to read, or undefined when the server reads it. */
export function handedOverBody(request: FastifyRequest): HandedOverBody | undefined {
  const over = handedOver.get(request.raw);
  if (!over) return undefined;
  if (!over.deadlines) throw new Error('the deadlines of a handed-over body were not given (body-timeouts.ts)');
  const { socket } = request.raw;
  const controller = new AbortController();
  const closed = (): void => controller.abort(cutShort());
  socket.once('close', closed);
  return {
    fd: over.handle.fd,
    head: over.head,
    length: over.length,
    startedAt: over.startedAt,
    ...over.deadlines,
    signal: controller.signal,
    bodyRead: () => {
      socket.off('close', closed);
      // Node times out a request whose body it has not seen end: this one has ended.
      (socket as unknown as { parser?: { remove?: () => void } | null }).parser?.remove?.();
    },
  };
}
