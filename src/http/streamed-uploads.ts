/**
 * Routes that take large uploads (projects, bundles, data files) get their body as the stream it
 * arrives as, which the service writes to the disk, rather than as a buffer in memory: what an
 * upload is is read from its bytes, whatever its type, and its size is held to the route's limit
 * by the service as it reads (413), and here before reading when `Content-Length` declares more.
 */
import { Readable } from 'node:stream';

import { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

import { PayloadTooLarge } from '../errors.js';
import { type HandedOverBody } from '../services/threaded-receipt.js';
import { giveBackReads, handedOverBody, handOverBodies } from './handed-over-bodies.js';
import { type UploadBudget } from './upload-budget.js';

/** How long the rest of a refused upload is read and dropped before its connection is closed. */
const LINGER_MS = 2_000;

/**
 * A refused upload's unread body is not read to its end to keep the connection: it is closed.
 * Not at once, though: Node closes a `Connection: close` answer's socket as soon as the answer is
 * written, and the data the client is still sending then meets a reset, which makes the client
 * lose the answer it has not read yet (it sees EPIPE or ECONNRESET instead of, say, the 409).
 * What keeps arriving is read and dropped for a while after the answer, as web servers linger.
 * So is the connection of any answer to a request whose body was handed over to a thread.
 */
function lingerThenClose(request: FastifyRequest, reply: FastifyReply): void {
  const { raw } = request;
  if (raw.complete) return;
  void reply.header('connection', 'close');
  const { socket } = raw;
  socket.destroySoon = () => {
    socket.end();
    giveBackReads(raw);
    raw.unpipe();
    raw.resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.once('close', () => clearTimeout(timer));
  };
}

/** Makes every body of `app`'s routes a stream, whatever its `Content-Type`. */
export function takeStreamedBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.addHook('onError', async (request, reply) => lingerThenClose(request, reply));
}

/** The request's body as a stream; an empty one when it has none. */
export function uploadBody(request: FastifyRequest): Readable {
  return request.body instanceof Readable ? request.body : Readable.from([]);
}

/**
 * An upload route's `onRequest` after `admitUpload`, for a route whose service reads bodies on a
 * thread of their own: takes the body off the connection's reads when it can (handed-over-bodies.ts).
 */
export const handOverBody = handOverBodies(lingerThenClose);

/** The request's body left on its socket for a thread to read, else as a stream. */
export function threadedBody(request: FastifyRequest): Readable | HandedOverBody {
  return handedOverBody(request) ?? uploadBody(request);
}

/**
 * An upload route's `onRequest`: 413 when `Content-Length` declares more than `limit`; else holds
 * its share of the upload budget until it is answered.
 */
export function admitUpload(budget: UploadBudget, limit: number) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const declared = Number(request.headers['content-length']);
    if (Number.isSafeInteger(declared) && declared > limit) {
      void reply.header('connection', 'close');
      throw new PayloadTooLarge(`the upload is ${declared} bytes, more than the ${limit} this server takes`);
    }
    budget.holdDeclared(reply, request.headers['content-length'], limit);
  };
}
