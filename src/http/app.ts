import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory } from 'fastify';

import { type BearerCheck, bearerCheck, installBearerAuth } from './auth.js';
import { frameworkError, installErrorHandling, MAX_PATH_SEGMENT_LENGTH } from './errors.js';
import { installProjectScope } from './project-scope.js';
import { type RouteModule } from './route-module.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Serves a request ahead of the router, or hands it on with `next`. */
export type EarlyHandler = (request: IncomingMessage, response: ServerResponse, next: () => void) => void;

/** Told of each answered request: its route pattern (undefined when no route matched), status and time. */
export type RequestObserver = (method: string, route: string, status: number, seconds: number) => void;

/**
 * The HTTP server: JSON in and out, every path with or without a trailing slash, errors as
 * `{"error": ...}`, the OpenAPI description at /api/openapi.json and its reader at /docs.
 */
export async function buildApp(
  logger: FastifyBaseLogger,
  routes: RouteModule[],
  options: { apiToken: string | undefined; beforeRouting?: EarlyHandler; observe?: RequestObserver },
): Promise<FastifyInstance> {
  const authorized = options.apiToken === undefined ? undefined : bearerCheck(options.apiToken);
  const app = Fastify({
    ...(options.beforeRouting && { serverFactory: serverWith(options.beforeRouting, authorized) }),
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT_LENGTH },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    frameworkErrors: frameworkError,
  });
  installErrorHandling(app);
  installBearerAuth(app, authorized);
  installProjectScope(app);
  const observe = options.observe;
  if (observe) {
    // A callback hook rather than an async one: no promise and no microtask on every request.
    app.addHook('onResponse', (request, reply, done) => {
      observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }
  // Only JSON is accepted: any other body type gets 415 instead of being parsed as text.
  app.removeContentTypeParser('text/plain');
  await app.register(swagger, {
    openapi: {
      info: { title: 'Steward', description: 'Administration of QGIS Server', version: '0.1.0' },
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
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  for (const { prefix, routes: plugin } of routes) await app.register(plugin, { prefix });
  return app;
}

/**
 * The HTTP server Fastify would make, with `beforeRouting` given each authorised request first;
 * a request without the token goes straight to the router, which refuses it.
 */
function serverWith(beforeRouting: EarlyHandler, authorized: BearerCheck | undefined): FastifyServerFactory<Server> {
  return (route, options) => {
    const server = createServer((request, response) => {
      const next = (): void => route(request, response);
      if (authorized && !authorized(request.headers.authorization)) next();
      else beforeRouting(request, response, next);
    });
    server.keepAliveTimeout = options['keepAliveTimeout'] as number;
    server.requestTimeout = options['requestTimeout'] as number;
    server.setTimeout(options['connectionTimeout'] as number);
    return server;
  };
}
