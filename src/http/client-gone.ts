import { type FastifyReply } from 'fastify';

import { ClientClosedRequest } from '../errors.js';

/**
 * Aborted once the client closes its connection before `reply` is sent, so that work done only
 * for it (`what`) stops rather than runs on for nobody.
 */
export function clientGoneSignal(reply: FastifyReply, what: string): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished)
      controller.abort(new ClientClosedRequest(`the client closed its connection before ${what} was done`));
  });
  return controller.signal;
}
