import { createHash, timingSafeEqual } from 'node:crypto';

import { type FastifyInstance } from 'fastify';

import { RetryLater, type StewardError, Unauthorized } from '../errors.js';
import { sendError } from './errors.js';
import { isOpenRoute } from './open-routes.js';
import { TokenFailures } from './token-failures.js';

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

/** The token check of the protected routes, with wrong tokens throttled per address. */
export class TokenGate {
  private readonly authorized: BearerCheck;
  private readonly failures: TokenFailures;

  constructor(token: string, failuresPerMinute: number) {
    this.authorized = bearerCheck(token);
    this.failures = new TokenFailures(failuresPerMinute);
  }

  /** Whether the request may go on at once: the right token from an address not refused. Counts nothing. */
  admits(authorization: string | undefined, address: string): boolean {
    return this.failures.retryAfter(address) === undefined && this.authorized(authorization);
  }

  /**
   * Why a request is refused, or undefined. A wrong token is counted against its address; a
   * request without an `Authorization` header guesses nothing and is not.
   */
  refusal(authorization: string | undefined, address: string): StewardError | undefined {
    const wait = this.failures.retryAfter(address);
    if (wait !== undefined) {
      return new RetryLater(429, `too many wrong tokens from this address; try again in ${wait} s`, wait);
    }
    if (this.authorized(authorization)) return undefined;
    if (authorization !== undefined) this.failures.failed(address);
    return new Unauthorized('this API needs Authorization: Bearer <STEWARD_API_TOKEN>');
  }
}

/**
 * With a token configured (a gate given), every route but the open ones (open-routes.ts) needs
 * `Authorization: Bearer <token>`. The check runs once the router has matched the route, so it
 * judges the route the request reaches, however its path was spelt.
 */
export function installTokenGate(app: FastifyInstance, gate: TokenGate | undefined): void {
  if (gate === undefined) {
    app.log.warn('STEWARD_API_TOKEN is not set: the API is open to anyone who can reach it');
    return;
  }
  app.addHook('onRequest', async (request, reply) => {
    if (isOpenRoute(request.method, request.routeOptions.url)) return;
    const refusal = gate.refusal(request.headers.authorization, request.ip);
    if (refusal === undefined) return;
    if (refusal instanceof Unauthorized) void reply.header('www-authenticate', 'Bearer realm="steward"');
    return sendError(reply, refusal);
  });
}
