/** Route plugins in a bare Fastify app, with the `{"error": message}` mapping of the real app. */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { StewardError } from '../../src/errors.js';
import { symbologyRoutes } from '../../src/http/routes/symbology.js';
import type { SymbologyCatalogue } from '../../src/qgis/symbology/catalogue.js';

export async function routesApp(routes: FastifyPluginAsync): Promise<FastifyInstance> {
  const app = Fastify();
  app.setErrorHandler((error: FastifyError | StewardError, _request, reply) => {
    const status = error instanceof StewardError ? error.status : (error.statusCode ?? 500);
    return reply.status(status).send({ error: error.message });
  });
  await app.register(routes);
  await app.ready();
  return app;
}

export function symbologyApp(catalogue: SymbologyCatalogue): Promise<FastifyInstance> {
  return routesApp(symbologyRoutes(catalogue));
}
