import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { installBearerAuth } from './auth.js';
import { frameworkError, installErrorHandling } from './errors.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * The HTTP server: JSON in and out, every path with or without a trailing slash, errors as
 * `{"error": ...}`, the OpenAPI description at /api/openapi.json and its reader at /docs.
 */
export async function buildApp(
  logger: FastifyBaseLogger,
  routes: FastifyPluginAsync[],
  options: { apiToken: string | undefined },
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger,
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
    frameworkErrors: frameworkError,
  });
  installErrorHandling(app);
  installBearerAuth(app, options.apiToken);
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
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  for (const route of routes) await app.register(route);
  return app;
}
