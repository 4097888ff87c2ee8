/**
 * An upload's body written to a file as it arrives, never held in memory: at most `limit` bytes
 * (413 past them), flushed to the disk, and removed on any failure, so that a refused, cut short
 * or interrupted upload leaves nothing behind.
 */
import { rm } from 'node:fs/promises';
import { type Readable } from 'node:stream';

import { BadRequest, PayloadTooLarge, RequestTimeout, StewardError } from '../errors.js';
import { insufficientStorage, isDiskFull } from './disk-space.js';
import { FileOutput } from './file-output.js';

/** An upload whose client stopped sending, or went, before its end. */
export function cutShort(): BadRequest {
  return new BadRequest('the upload was cut short before its end');
}

/** A body that stopped arriving for `idleMs`. */
export function bodyStopped(idleMs: number): RequestTimeout {
  return new RequestTimeout(`the request body stopped arriving for ${idleMs / 1000} s`);
}

/** A request not received whole `totalMs` after it began. */
export function bodyLate(totalMs: number): RequestTimeout {
  return new RequestTimeout(`the request was not received whole within ${totalMs / 1000} s`);
}

/**
 * What a failed receipt answers: Steward's own errors as they are, a full disk (where `path` is)
 * 507, a lost client 400.
 */
export async function receiptError(error: unknown, path: string): Promise<unknown> {
  if (error instanceof StewardError) return error;
  if (isDiskFull(error)) return insufficientStorage(error, path);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || code === 'ABORT_ERR') return cutShort();
  return error;
}

/** The chunks of `body` until it ends, PayloadTooLarge past `limit` bytes; `body` is not destroyed when refused. */
export async function* limitedChunks(body: Readable, limit: number): AsyncGenerator<Buffer> {
  let received = 0;
  // Not destroyed when refused: the client is still to be told why, on its connection.
  for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > limit) throw new PayloadTooLarge(`the upload is larger than ${limit} bytes`);
    yield chunk;
  }
}

/**
 * Writes `chunks` to the new file `path` (which must not exist) and flushes it; the bytes written.
 * Their limit is the caller's (`limitedChunks`, or a body read no further than its admitted
 * length); nothing stays at `path` when anything fails.
 */
export async function receiveFile(chunks: AsyncIterable<Buffer>, path: string): Promise<number> {
  let received = 0;
  let file: FileOutput | undefined;
  try {
    file = await FileOutput.create(path);
    for await (const chunk of chunks) {
      received += chunk.length;
      await file.write(chunk);
    }
    await file.finish();
    return received;
  } catch (error) {
    await file?.abandon();
    await rm(path, { force: true });
    throw await receiptError(error, path);
  }
}
