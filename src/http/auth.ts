import { type IncomingMessage } from 'node:http';

import { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

import { type AccessService, type Identity, isAnonymous } from '../access/service.js';
import { Forbidden, RetryLater, StewardError, Unauthorized } from '../errors.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { authorizeBody, authorizeJob, authorizeRoute, filterPayload, type RouteRequest } from './access-policy.js';
import { sendError } from './errors.js';
import { isOpenRoute } from './open-routes.js';
import { OWS_AUTH_ROUTE } from './ows-access.js';
import { TILES_AUTH_ROUTE } from './tiles-access.js';
import { TokenFailures } from './token-failures.js';
import { actingIdentity, takesViewAs, viewedRefusal } from './view-as.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who sent the request, once the token check passed; undefined on open routes and without access control. */
    identity: Identity | undefined;
  }
}

/** The token presented as `Authorization: Bearer <token>`; '' for another scheme; undefined without the header. */
function bearer(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  return /^Bearer (.+)$/.exec(authorization)?.[1] ?? '';
}

const REFUSED = 'this API needs Authorization: Bearer <token>, a token of POST /api/tokens or STEWARD_API_TOKEN';

/** The identity check of the protected routes, with wrong tokens throttled per address. */
export class TokenGate {
  private readonly failures: TokenFailures;

  constructor(
    readonly access: AccessService,
    failuresPerMinute: number,
    /** The project of a job, for the job routes' check. */
    readonly jobProject: (id: string) => Promise<ProjectRef | undefined> = async () => undefined,
  ) {
    this.failures = new TokenFailures(failuresPerMinute);
  }

  /**
   * The identity of a request as it arrives, before routing, when it is known at once
   * (STEWARD_API_TOKEN, a token verified lately, the anonymous role), from an address not
   * refused; undefined otherwise. Counts nothing.
   */
  knownIdentity(request: IncomingMessage): Identity | undefined {
    const address = clientAddress(request.url, request.socket.remoteAddress ?? '', request.headers['x-real-ip']);
    if (this.failures.retryAfter(address) !== undefined) return undefined;
    const token = bearer(request.headers.authorization);
    if (token === undefined) return this.access.anonymous();
    return token === '' ? undefined : this.access.knownIdentity(token);
  }

  /**
   * The identity of a request, or why it is refused. A wrong, expired or revoked token is counted
   * against its address; a request without an `Authorization` header guesses nothing and is not.
   */
  async identify(authorization: string | undefined, address: string): Promise<Identity | StewardError> {
    const wait = this.failures.retryAfter(address);
    if (wait !== undefined) {
      return new RetryLater(429, `too many wrong tokens from this address; try again in ${wait} s`, wait);
    }
    const token = bearer(authorization);
    if (token === undefined) return this.access.anonymous() ?? new Unauthorized(REFUSED, { code: 'token_missing' });
    let identity: Identity | undefined;
    try {
      identity = token === '' ? undefined : await this.access.identify(token);
    } catch (error) {
      // The OpenID provider unreachable: the token is not known wrong.
      if (error instanceof StewardError) return error;
      throw error;
    }
    if (identity) return identity;
    this.failures.failed(address);
    return new Unauthorized(`${REFUSED}; this one is wrong, expired or revoked`, { code: 'token_invalid' });
  }
}

const CHALLENGE = 'Bearer realm="steward"';

/** nginx's auth_requests, before QGIS Server and MapProxy: nginx asks for its clients. */
const NGINX_AUTH_ROUTES: ReadonlySet<string | undefined> = new Set([OWS_AUTH_ROUTE, TILES_AUTH_ROUTE]);

function isLoopback(address: string): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}

/**
 * The address wrong tokens count against, of a request from `ip` to the route `route`: the
 * client's as nginx gives it (X-Real-IP) for its auth_request from this machine, whose own
 * address is every client's.
 */
function clientAddress(route: string | undefined, ip: string, real: string | string[] | undefined): string {
  if (NGINX_AUTH_ROUTES.has(route) && isLoopback(ip) && typeof real === 'string' && real !== '') return real;
  return ip;
}

/** A refusal nginx's auth_request can pass on: 429 (too many wrong tokens) becomes 403. */
function forNginx(request: FastifyRequest, error: StewardError): StewardError {
  if (!NGINX_AUTH_ROUTES.has(request.routeOptions.url) || error.status === 401 || error.status === 403) return error;
  return new Forbidden(error.clientMessage, { code: error.code });
}

/** The route's facts the policy judges. */
export function routeRequest(request: FastifyRequest): RouteRequest {
  return {
    method: request.method,
    url: request.routeOptions.url ?? '',
    params: request.params,
    query: request.query,
  };
}

/** A refusal as sent: the anonymous role refused is asked for a token, which may open what it may not. */
function refusalOf(identity: Identity, error: unknown): unknown {
  if (isAnonymous(identity) && error instanceof StewardError && error.status < 500)
    return new Unauthorized(`${REFUSED} (${error.clientMessage})`, { code: 'token_missing' });
  return error;
}

function deny(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof Unauthorized) void reply.header('www-authenticate', CHALLENGE);
  return sendError(reply, error);
}

/**
 * Runs the request as the identity `view_as` makes of `identity` (view-as.ts), and judges its route
 * by the policy as that identity; throws the refusal.
 */
async function authorize(
  request: FastifyRequest,
  access: AccessService,
  identity: Identity | undefined,
  gate?: TokenGate,
): Promise<void> {
  const route = routeRequest(request);
  const acting = actingIdentity(access, identity, route);
  request.identity = acting;
  if (acting === undefined) return;
  try {
    if (authorizeRoute(acting, route) === 'job' && gate)
      authorizeJob(acting, route, await gate.jobProject((request.params as { id: string }).id));
  } catch (error) {
    throw viewedRefusal(acting, identity, error);
  }
}

/**
 * With access control on (a gate given), every route but the open ones (open-routes.ts) needs an
 * identity, and what the route does needs its permissions (access-policy.ts). The check runs once
 * the router has matched the route, so it judges the route the request reaches, however its path
 * was spelt; what a body names is judged once it is validated, and listings are filtered before
 * they are serialized.
 */
export function installTokenGate(app: FastifyInstance, gate: TokenGate | undefined, access: AccessService): void {
  app.decorateRequest('identity', undefined);
  app.addHook('preSerialization', async function filterListing(request, reply, payload) {
    const identity = request.identity;
    if (!identity) return payload;
    return filterPayload(identity, routeRequest(request), reply.statusCode, payload);
  });
  if (gate === undefined) {
    app.log.warn('STEWARD_API_TOKEN is not set: the API is open to anyone who can reach it');
    // Open, a request has no identity but the roles it is viewed as (view-as.ts): judged on the
    // routes that take view_as only, not on every request; the others ignore it.
    async function identifyRequest(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
      try {
        await authorize(request, access, undefined);
      } catch (error) {
        return deny(reply, error);
      }
      return undefined;
    }
    app.addHook('onRoute', function viewAsRoutes(route) {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (!methods.some((method) => takesViewAs(method, route.url))) return;
      route.onRequest = [...(route.onRequest === undefined ? [] : [route.onRequest].flat()), identifyRequest];
    });
    return;
  }
  app.addHook('onRequest', async function identifyRequest(request, reply) {
    if (isOpenRoute(request.method, request.routeOptions.url)) return;
    const address = clientAddress(request.routeOptions.url, request.ip, request.headers['x-real-ip']);
    const identity = await gate.identify(request.headers.authorization, address);
    if (identity instanceof StewardError) return deny(reply, forNginx(request, identity));
    request.identity = identity;
    if (request.routeOptions.url === undefined) return; // no route: the not-found handler answers
    try {
      await authorize(request, access, identity, gate);
    } catch (error) {
      return deny(reply, refusalOf(identity, error));
    }
  });
  app.addHook('preHandler', async function checkBody(request, reply) {
    const identity = request.identity;
    if (!identity) return;
    try {
      authorizeBody(identity, routeRequest(request), request.body);
    } catch (error) {
      const refusal = refusalOf(identity, error);
      if (refusal instanceof Unauthorized) void reply.header('www-authenticate', CHALLENGE);
      throw refusal;
    }
  });
}
