/**
 * Uploads received on a worker thread (receipt-thread.ts), which reads each body from the
 * request's socket (storage/socket-body.ts) and writes it: a project bundle unpacked, its files
 * written, or a data file written whole. The event loop that serves every other request does no
 * work per byte of them. One thread takes every upload of the moment, started with the first and
 * ended once none has come for a while. It is told where what it writes goes (for a bundle, the
 * name of the staged folder), so that whatever becomes of the thread, the caller can remove what
 * it wrote; it answers what it received, or the error the client is to get. Should it end before
 * answering (it crashed, or was stopped), each upload it had gets 503.
 */
import { closeSync } from 'node:fs';
import { type Worker } from 'node:worker_threads';

import { ServiceUnavailable, StewardError, type StewardErrorOptions } from '../errors.js';
import { siblingModule, startThread } from '../runtime/worker-thread.js';
import { duplicateDescriptor, type SocketBody } from '../storage/socket-body.js';
import { type ZipLimits } from '../storage/zip-entries.js';
import { type Received } from './upload-receipt.js';

/** A request body left on its socket by the HTTP server, for a thread to read. */
export interface HandedOverBody extends SocketBody {
  /** Aborted when the connection closes before the body is read: the thread stops. */
  signal: AbortSignal;
  /** Told once the thread is done with the socket, the body read or refused. */
  bodyRead(): void;
}

/** An error as it crosses between threads: a Steward error with its status, else its message and code. */
export interface SentError {
  name: string;
  message: string;
  status?: number;
  clientMessage?: string;
  code?: string;
}

export function sentError(error: unknown): SentError {
  if (error instanceof StewardError) {
    const { name, message, status, clientMessage, code } = error;
    return { name, message, status, clientMessage, code };
  }
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const { name, message } = error instanceof Error ? error : new Error(String(error));
  return { name, message, ...(code !== undefined && { code }) };
}

/** The error `sent` was, as a Steward error of its status (its class's name kept for the log). */
export function receivedError(sent: SentError): Error {
  let error: Error;
  if (sent.status === undefined) error = Object.assign(new Error(sent.message), sent.code && { code: sent.code });
  else {
    const options: StewardErrorOptions = {
      ...(sent.clientMessage !== undefined && { clientMessage: sent.clientMessage }),
      ...(sent.code !== undefined && { code: sent.code as StewardErrorOptions['code'] }),
    };
    error = new StewardError(sent.status, sent.message, options);
  }
  error.name = sent.name;
  return error;
}

/** A project upload, unpacked as it arrives (upload-receipt.ts). */
export interface UnpackTask {
  kind: 'unpack';
  /** The body, its descriptor one the caller closes once the thread is done with it. */
  body: SocketBody;
  limits: ZipLimits;
  /** The folder data files go in, or why there is none (refused at the first data file). */
  folder: { path: string } | { refusal: SentError };
  /** The name of the staged folder to write them in. */
  staging: string;
  /** A path on the disk named when it is full and no file names it. */
  where: string;
}

/** A body written whole to the new file `path` (storage/received-file.ts). */
export interface FileTask {
  kind: 'file';
  body: SocketBody;
  path: string;
}

export type ReceiptTask = UnpackTask | FileTask;

/** What the thread answers of each kind of task. */
export interface ReceiptResults {
  unpack: Received;
  /** The bytes written. */
  file: number;
}

type Result = ReceiptResults[ReceiptTask['kind']];

/** What the thread is sent: an upload to receive, or to stop reading one with this error. */
export type ReceiptRequest = { id: number; task: ReceiptTask } | { id: number; abort: SentError };

/** What the thread answers of an upload. */
export interface ReceiptReply {
  id: number;
  outcome: { received: Result } | { failure: SentError };
}

const THREAD_MAIN = siblingModule(import.meta.url, 'receipt-thread');
/** How long the thread is kept without uploads. */
const IDLE_MS = 30_000;

function threadEnded(reason: string): ServiceUnavailable {
  return new ServiceUnavailable(`the thread receiving uploads ended before it was done: ${reason}`, {
    clientMessage: 'the upload could not be received whole: the server stopped reading it; send it again',
  });
}

interface Waiting {
  resolve(received: Result): void;
  reject(error: Error): void;
}

/** The thread, started when an upload comes and none runs; each upload it has, by id. */
class ReceiptThread {
  private thread: { worker: Worker; waiting: Map<number, Waiting> } | undefined;
  private lastId = 0;
  private idle: NodeJS.Timeout | undefined;

  /** Receives `task` on the thread; settles once the thread is done with it, or has ended. */
  receive(task: ReceiptTask, signal: AbortSignal): Promise<Result> {
    const { worker, waiting } = this.running();
    const id = ++this.lastId;
    const abort = (): void => worker.postMessage({ id, abort: sentError(signal.reason) } satisfies ReceiptRequest);
    return new Promise<Result>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      signal.addEventListener('abort', abort, { once: true });
      worker.postMessage({ id, task } satisfies ReceiptRequest);
    }).finally(() => {
      signal.removeEventListener('abort', abort);
      waiting.delete(id);
      if (waiting.size === 0 && this.thread?.waiting === waiting) this.stopWhenIdle();
    });
  }

  private running(): { worker: Worker; waiting: Map<number, Waiting> } {
    clearTimeout(this.idle);
    if (this.thread) return this.thread;
    const worker = startThread(THREAD_MAIN, undefined);
    // Uploads in flight hold the process's requests open; an idle thread holds nothing.
    worker.unref();
    const waiting = new Map<number, Waiting>();
    let failure = '';
    worker.on('message', ({ id, outcome }: ReceiptReply) => {
      if ('received' in outcome) waiting.get(id)?.resolve(outcome.received);
      else waiting.get(id)?.reject(receivedError(outcome.failure));
    });
    worker.on('error', (error) => (failure = error.message));
    worker.on('exit', (code) => {
      if (this.thread?.worker === worker) this.thread = undefined;
      const reason = failure || `exit code ${code}`;
      for (const upload of waiting.values()) upload.reject(threadEnded(reason));
    });
    this.thread = { worker, waiting };
    return this.thread;
  }

  private stopWhenIdle(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      const idle = this.thread?.worker;
      this.thread = undefined;
      void idle?.terminate();
    }, IDLE_MS).unref();
  }
}

const receipts = new ReceiptThread();

/**
 * Hands `body` to the thread as the task `taskOf` makes of it, given a descriptor of the socket
 * of the thread's own (closed here once the thread is done, whatever became of the connection's).
 * Rejects with the error the client is to get, 503 should the thread end without answering.
 */
async function onThread<Kind extends ReceiptTask['kind']>(
  body: HandedOverBody,
  taskOf: (body: SocketBody) => ReceiptTask & { kind: Kind },
): Promise<ReceiptResults[Kind]> {
  const { fd, head, length, idleMs, totalMs, startedAt } = body;
  const descriptor = duplicateDescriptor(fd);
  try {
    const task = taskOf({ fd: descriptor, head, length, idleMs, totalMs, startedAt });
    // The thread answers a task of a kind with that kind's result.
    return (await receipts.receive(task, body.signal)) as ReceiptResults[Kind];
  } finally {
    closeSync(descriptor);
    body.bodyRead();
  }
}

/**
 * Receives the body on the receiving thread, its data files written to the staged folder named
 * `staging` in `folder()` (which may refuse, as when there is no upload root). Rejects with the
 * error the client is to get, 503 should the thread end without answering; the staged folder is
 * then the caller's to discard.
 */
export async function receiveOnThread(
  body: HandedOverBody,
  options: { limits: ZipLimits; staging: string; folder: () => string; where: string },
): Promise<Received> {
  let folder: UnpackTask['folder'];
  try {
    folder = { path: options.folder() };
  } catch (error) {
    folder = { refusal: sentError(error) };
  }
  const { limits, staging, where } = options;
  return onThread(body, (socketBody) => ({ kind: 'unpack', body: socketBody, limits, folder, staging, where }));
}

/**
 * Writes the body to the new file `path` on the receiving thread, flushed; the bytes written. No
 * more than the length the request declared is read, which its route admitted. Nothing stays at
 * `path` when it fails, as with `receiveFile`, unless the thread ended without answering (503):
 * the file is then the caller's to remove.
 */
export function receiveFileOnThread(body: HandedOverBody, path: string): Promise<number> {
  return onThread(body, (socketBody) => ({ kind: 'file', body: socketBody, path }));
}
