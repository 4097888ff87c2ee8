import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory } from 'fastify';

import { AccessService, type Identity } from '../access/service.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { installAuditTrail } from './audit-trail.js';
import { installTokenGate, TokenGate } from './auth.js';
import { installBodyTimeouts, REQUEST_SECONDS } from './body-timeouts.js';
import { frameworkError, installErrorHandling, MAX_PATH_SEGMENT_LENGTH } from './errors.js';
import { isOpenRoute } from './open-routes.js';
import { installProjectScope } from './project-scope.js';
import { requestIds } from './request-ids.js';
import { type RouteModule } from './route-module.js';
import { installSecurityHeaders } from './security-headers.js';
import { installWriteOrigin } from './write-origin.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Wrong tokens an address may send in a minute before it is refused (STEWARD_TOKEN_FAILURES). */
export const DEFAULT_TOKEN_FAILURES = 10;

/** Seconds a request body may stop arriving (STEWARD_BODY_IDLE_SECONDS). */
export const DEFAULT_BODY_IDLE_SECONDS = 30;

/**
 * Serves a request ahead of the router, or hands it on with `next`; `identity` is the request's
 * when access control is on (undefined when it is off), `requestId` the id its log lines carry,
 * the one Fastify gives it if it is handed on.
 */
export type EarlyHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  next: () => void,
  identity: Identity | undefined,
  requestId: string,
) => void;

/** `handlers` each in turn ahead of the router: each one's `next` is the one after it, the last one's the router. */
export function inTurn(...handlers: EarlyHandler[]): EarlyHandler {
  return handlers.reduceRight<EarlyHandler>(
    (after, handler) => (request, response, next, identity, requestId) =>
      handler(request, response, () => after(request, response, next, identity, requestId), identity, requestId),
    (_request, _response, next) => next(),
  );
}

/** Told of each answered request: its route pattern (undefined when no route matched), status and time. */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

/**
 * The HTTP server: JSON in and out, every path with or without a trailing slash, errors as
 * `{"error": ...}`, the OpenAPI description at /api/openapi.json and its reader at /docs.
 */
export async function buildApp(
  logger: FastifyBaseLogger,
  routes: RouteModule[],
  options: {
    /** STEWARD_API_TOKEN: access control on, with this token the bootstrap administrator. */
    apiToken: string | undefined;
    /**
     * Identities, roles and the audit log (docs/access.md), enforced when `apiToken` is set; made
     * from it alone, with no store, when not given.
     */
    access?: AccessService;
    /** The project of a job, for the job routes' access check. */
    jobProject?: (id: string) => Promise<ProjectRef | undefined>;
    /** Wrong tokens per minute and address before 429 (DEFAULT_TOKEN_FAILURES). */
    tokenFailures?: number;
    /** Seconds a request body may stop arriving before 408 (DEFAULT_BODY_IDLE_SECONDS). */
    bodyIdleSeconds?: number;
    beforeRouting?: EarlyHandler;
    observe?: RequestObserver;
    /** Origins of the basemaps the console offers, whose images its pages may load. */
    consoleImageOrigins?: readonly string[];
  },
): Promise<FastifyInstance> {
  const access = options.access ?? new AccessService(options.apiToken, undefined);
  const gate =
    options.apiToken === undefined
      ? undefined
      : new TokenGate(access, options.tokenFailures ?? DEFAULT_TOKEN_FAILURES, options.jobProject);
  const requestId = requestIds();
  const app = Fastify({
    genReqId: requestId,
    ...(options.beforeRouting && { serverFactory: serverWith(options.beforeRouting, gate, requestId) }),
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // Node's own bound, past the JSON 408 of installBodyTimeouts, for what that does not see.
    requestTimeout: (REQUEST_SECONDS + 30) * 1000,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT_LENGTH },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    frameworkErrors: frameworkError,
  });
  installErrorHandling(app);
  installTokenGate(app, gate, access);
  installAuditTrail(app, access, gate !== undefined);
  installSecurityHeaders(app, options.consoleImageOrigins);
  installBodyTimeouts(app, {
    idleMs: (options.bodyIdleSeconds ?? DEFAULT_BODY_IDLE_SECONDS) * 1000,
    totalMs: REQUEST_SECONDS * 1000,
  });
  installProjectScope(app);
  installWriteOrigin(app);
  const observe = options.observe;
  if (observe) {
    // A callback hook rather than an async one: no promise and no microtask on every request.
    app.addHook('onResponse', function observeRequest(request, reply, done) {
      observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }
  // Only JSON is accepted: any other body type gets 415 instead of being parsed as text.
  app.removeContentTypeParser('text/plain');
  markOpenRoutes(app);
  await app.register(swagger, {
    openapi: {
      info: { title: 'Steward', description: 'Administration of QGIS Server', version: '0.1.0' },
      // What the reader's Authorize button asks for; the open routes say they need nothing (markOpenRoutes).
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API token (STEWARD_API_TOKEN, or one made at /api/tokens) or an OpenID Connect access token',
          },
        },
      },
      security: [{ bearer: [] }],
      tags: [
        { name: 'projects' },
        { name: 'layers' },
        { name: 'styles' },
        { name: 'cache' },
        { name: 'symbology' },
        { name: 'processing' },
        { name: 'instances' },
        { name: 'server' },
        { name: 'datasources' },
        { name: 'jobs' },
        { name: 'history' },
        { name: 'access' },
      ],
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The reader's own policy, with hashes of its inline code; framed by no one, and without
    // upgrade-insecure-requests, which would send its files' requests to an https:// that may not be.
    staticCSP: true,
    transformStaticCSP: (policy) =>
      policy.replace("frame-ancestors 'self'", "frame-ancestors 'none'").replace(/\s*upgrade-insecure-requests;?/, ''),
  });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  for (const { prefix, routes: plugin } of routes) await app.register(plugin, { prefix });
  return app;
}

/** Gives each open route of the description an empty `security`: it needs no token. */
function markOpenRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', function markOpenRoute(route) {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.schema && methods.some((method) => isOpenRoute(method, route.url))) route.schema.security = [];
  });
}

/**
 * The HTTP server Fastify would make, with `beforeRouting` given each request whose identity is
 * known at once, with it; any other (no or a wrong token, one not verified lately, a throttled
 * address) goes straight to the router, whose check judges it once it has matched the route.
 * `beforeRouting` serves protected routes only, and checks the identity's permissions itself.
 */
function serverWith(
  beforeRouting: EarlyHandler,
  gate: TokenGate | undefined,
  requestId: (request: IncomingMessage) => string,
): FastifyServerFactory<Server> {
  return (route, options) => {
    const server = createServer((request, response) => {
      const next = (): void => route(request, response);
      if (!gate) return beforeRouting(request, response, next, undefined, requestId(request));
      const identity = gate.knownIdentity(request);
      if (identity) beforeRouting(request, response, next, identity, requestId(request));
      else next();
    });
    server.keepAliveTimeout = options['keepAliveTimeout'] as number;
    server.requestTimeout = options['requestTimeout'] as number;
    server.setTimeout(options['connectionTimeout'] as number);
    return server;
  };
}
