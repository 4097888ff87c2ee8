import { createHash, timingSafeEqual } from 'node:crypto';

import { type FastifyInstance } from 'fastify';

import { Unauthorized } from '../errors.js';
import { sendError } from './errors.js';

/** Whether an `Authorization` header opens the API. */
export type BearerCheck = (authorization: string | undefined) => boolean;

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Passes `Authorization: Bearer <token>` only. Digests are compared in constant time, so neither
 * the token's content nor its length leaks through timing.
 */
export function bearerCheck(token: string): BearerCheck {
  const expected = digest(token);
  return (authorization) => {
    const presented = /^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '';
    return presented !== '' && timingSafeEqual(digest(presented), expected);
  };
}

/** The API and the metrics need the token; the console's files and the health checks do not. */
function isProtected(url: string): boolean {
  return /^\/(api|metrics)(\/|\?|$)/.test(url);
}

/** With a token configured (a check given), every /api route and /metrics need `Authorization: Bearer <token>`. */
export function installBearerAuth(app: FastifyInstance, authorized: BearerCheck | undefined): void {
  if (authorized === undefined) {
    app.log.warn('STEWARD_API_TOKEN is not set: the API is open to anyone who can reach it');
    return;
  }
  app.addHook('onRequest', async (request, reply) => {
    if (!isProtected(request.url)) return;
    if (authorized(request.headers.authorization)) return;
    void reply.header('www-authenticate', 'Bearer realm="steward"');
    return sendError(reply, new Unauthorized('this API needs Authorization: Bearer <STEWARD_API_TOKEN>'));
  });
}
