import { type FastifyReply } from 'fastify';

import { RetryLater } from '../errors.js';

/** What a client refused for want of room is told to wait, in seconds. */
const RETRY_SECONDS = 5;

/**
 * The bytes of uploads the API works on at once (STEWARD_UPLOAD_BUDGET). An upload holds its
 * share from before its body is read until its answer is sent; parsing a document takes many
 * times its size in memory, so without a bound a few concurrent large uploads take the process
 * past its heap and every request in flight with it.
 */
export class UploadBudget {
  private held = 0;

  constructor(readonly bytes: number) {}

  /**
   * Holds `size` bytes for the request `reply` answers, given back once it is answered (or its
   * client is gone); RetryLater (503) when they would pass the budget.
   */
  hold(reply: FastifyReply, size: number): void {
    if (size <= 0) return;
    if (this.held + size > this.bytes) {
      throw new RetryLater(
        503,
        `too many uploads are being worked on (${this.bytes} bytes at once); try again in ${RETRY_SECONDS} s`,
        RETRY_SECONDS,
      );
    }
    this.held += size;
    reply.raw.once('close', () => {
      this.held -= size;
    });
  }

  /**
   * Holds, before the body is read, the bytes a request declares (`Content-Length`) or, when it
   * declares none, the most its route takes (`limit`).
   */
  holdDeclared(reply: FastifyReply, contentLength: string | undefined, limit: number): void {
    const declared = Number(contentLength);
    this.hold(reply, Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, limit) : limit);
  }
}
