/** GET /api/server: what this Steward offers, so that a client shows only what works. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';

const ServerFacts = Type.Object({
  storage: Type.Union([Type.Literal('filesystem'), Type.Literal('postgresql')], {
    description: 'Where projects are kept; with postgresql, project routes take a `schema`',
  }),
  cache: Type.Union([Type.Literal('mapproxy'), Type.Literal('disabled')], {
    description: 'Whether the MapProxy tile cache is enabled (STEWARD_MAPPROXY_PROJECTS_DIR)',
  }),
  monitoring: Type.Boolean({
    description: 'Whether QGIS Server instances can register (STEWARD_QGISSERVER_MONITORING_PORT)',
  }),
  data_roots: Type.Array(Type.String(), {
    description: 'The folders datasources must lie in (STEWARD_DATA_ROOTS); empty when any path is allowed',
  }),
  database_service: Type.Optional(
    Type.String({ description: 'The PostgreSQL connection service projects are kept through, when they are' }),
  ),
});
export type ServerFacts = Static<typeof ServerFacts>;

export function serverRoutes(facts: ServerFacts): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    app.withTypeProvider<TypeBoxTypeProvider>().get(
      '',
      {
        schema: {
          tags: ['server'],
          summary: 'What this server offers: project storage, tile cache, monitoring, data folders',
          response: { 200: ServerFacts, ...errorResponses },
        },
      },
      async () => facts,
    );
  };
  return { prefix: '/api/server', routes };
}
