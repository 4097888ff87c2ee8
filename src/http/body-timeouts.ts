import { type IncomingHttpHeaders } from 'node:http';
import { Transform } from 'node:stream';

import { type FastifyInstance } from 'fastify';

import { type RequestTimeout } from '../errors.js';
import { bodyLate, bodyStopped } from '../storage/received-file.js';
import { isHandedOver, setBodyDeadlines } from './handed-over-bodies.js';

export interface BodyTimeouts {
  /** Milliseconds a body may stop arriving (STEWARD_BODY_IDLE_SECONDS). */
  idleMs: number;
  /** Milliseconds from the request's start by which its body must have arrived whole. */
  totalMs: number;
}

/** Seconds by which a request must have arrived whole, body and all. */
export const REQUEST_SECONDS = 300;

function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Answers 408, and closes the connection, when a request body stops arriving for `idleMs` or has
 * not arrived whole `totalMs` after the request began: a client that sends a byte now and then
 * would otherwise hold its connection and its share of memory for as long as it likes.
 */
export function installBodyTimeouts(app: FastifyInstance, timeouts: BodyTimeouts): void {
  app.addHook('preParsing', function guardBody(request, reply, payload, done) {
    if (isHandedOver(request)) {
      // Read by a thread, which holds it to the deadlines: none of it passes here.
      setBodyDeadlines(request, timeouts.idleMs, timeouts.totalMs);
      done(null, payload);
      return;
    }
    if (!hasBody(request.headers)) {
      done(null, payload);
      return;
    }
    const guarded = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        idle.refresh();
        callback(null, chunk);
      },
    });
    const fail = (timeout: RequestTimeout): void => {
      void reply.header('connection', 'close');
      guarded.destroy(timeout);
    };
    const idle = setTimeout(() => fail(bodyStopped(timeouts.idleMs)), timeouts.idleMs);
    const total = setTimeout(() => fail(bodyLate(timeouts.totalMs)), Math.max(0, timeouts.totalMs - reply.elapsedTime));
    const stop = (): void => {
      clearTimeout(idle);
      clearTimeout(total);
    };
    guarded.once('end', stop).once('close', stop);
    reply.raw.once('close', stop);
    payload.once('error', (error) => guarded.destroy(error));
    done(null, payload.pipe(guarded));
  });
}
