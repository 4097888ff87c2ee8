/**
 * A request body read straight from its socket by a thread other than the one that took the
 * request: the HTTP server stops reading the connection once it has the headers, and the thread
 * that reads the body does so from a descriptor of its own (the addon native/fd-duplicate.c), so
 * that closing it leaves the connection open for the answer. The body is read into one buffer, a
 * megabyte at a time, each chunk lent until the next is asked for (as zip-stream.ts takes them);
 * no more than its length is read, nor past the deadlines of bodies (408).
 */
import { type ConnectOpts, Socket, type SocketConstructorOpts } from 'node:net';

import { nativeAddon } from './native-addon.js';
import { bodyLate, bodyStopped, cutShort } from './received-file.js';

/** A request body left on its socket, as the thread that reads it is given it. */
export interface SocketBody {
  /** The connection's descriptor, kept open by its owner until the reader is done. */
  fd: number;
  /** The body's first bytes, read before it was handed over. */
  head: Uint8Array;
  /** Bytes of the body still on the socket. */
  length: number;
  /** Milliseconds the body may stop arriving. */
  idleMs: number;
  /** Milliseconds from `startedAt` (Date.now()) by which it must have arrived whole. */
  totalMs: number;
  startedAt: number;
}

interface FdDuplicate {
  duplicate(fd: number): number;
}

/** Bytes read from the socket at most at a time. */
const READ_BYTES = 1024 * 1024;

const addon = (): FdDuplicate | null => nativeAddon<FdDuplicate>('fd-duplicate');

/** Whether bodies can be read from their sockets here (the addon is built). */
export function socketBodiesReadable(): boolean {
  return addon() !== null;
}

/** A new descriptor of what `fd` refers to, for its owner to close. */
export function duplicateDescriptor(fd: number): number {
  const duplicates = addon();
  if (!duplicates) throw new Error('the addon fd-duplicate is not built');
  return duplicates.duplicate(fd);
}

/** One read of the socket at a time, each asked for once the last is done with. */
class SocketReads {
  private readonly buffer = Buffer.allocUnsafe(READ_BYTES);
  private readonly socket: Socket;
  private ready: Buffer | undefined;
  private ended: unknown;
  private wake: (() => void) | undefined;

  constructor(
    fd: number,
    /** Bytes to read: the reads stop there, whatever follows on the connection. */
    private left: number,
  ) {
    // Node's constructor takes `onread` as connect() does, which its types do not say.
    const options: SocketConstructorOpts & ConnectOpts = {
      fd,
      readable: true,
      writable: false,
      // Never shut the connection down: its owner answers on it.
      allowHalfOpen: true,
      onread: {
        buffer: () => this.buffer.subarray(0, Math.max(1, Math.min(READ_BYTES, this.left))),
        callback: (bytes: number, buffer: Uint8Array) => this.read(bytes, buffer),
      },
    };
    this.socket = new Socket(options);
    this.socket.on('end', () => this.end(cutShort()));
    this.socket.on('error', (error) => this.end(error));
  }

  /** A read done: held until asked for, and no other read until then. */
  private read(bytes: number, buffer: Uint8Array): false {
    this.left -= bytes;
    this.ready = Buffer.from(buffer.buffer, buffer.byteOffset, bytes);
    this.wake?.();
    return false;
  }

  private end(reason: unknown): void {
    this.ended ??= reason;
    this.wake?.();
  }

  /** The next chunk, waiting at most `waitMs`; `late()` is the error past that. */
  async next(waitMs: number, late: () => Error, signal?: AbortSignal): Promise<Buffer> {
    if (this.ready === undefined && this.ended === undefined) {
      this.socket.resume();
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', aborted);
          this.wake = undefined;
          resolve();
        };
        const aborted = (): void => this.end(signal?.reason);
        const timer = setTimeout(() => this.end(late()), waitMs);
        signal?.addEventListener('abort', aborted, { once: true });
        this.wake = done;
        if (signal?.aborted) aborted();
      });
    }
    const chunk = this.ready;
    this.ready = undefined;
    if (chunk !== undefined) return chunk;
    throw this.ended;
  }

  close(): void {
    this.socket.destroy();
  }
}

/**
 * The body's bytes: its head, then the rest as read from a new descriptor of its socket (closed
 * once done), each chunk lent until the next is asked for. Cut short (400) when the connection
 * ends first, 408 past its deadlines, `signal`'s reason once aborted.
 */
export async function* socketBodyChunks(body: SocketBody, signal?: AbortSignal): AsyncGenerator<Buffer> {
  if (body.head.length > 0) yield Buffer.from(body.head.buffer, body.head.byteOffset, body.head.byteLength);
  if (body.length === 0) return;
  const reads = new SocketReads(duplicateDescriptor(body.fd), body.length);
  const deadline = body.startedAt + body.totalMs;
  try {
    for (let left = body.length; left > 0;) {
      const wholeBy = deadline - Date.now();
      const chunk =
        wholeBy < body.idleMs
          ? await reads.next(Math.max(0, wholeBy), () => bodyLate(body.totalMs), signal)
          : await reads.next(body.idleMs, () => bodyStopped(body.idleMs), signal);
      left -= chunk.length;
      yield chunk;
    }
  } finally {
    reads.close();
  }
}
