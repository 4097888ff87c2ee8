/** The tile cache of a project: its state, and its reset. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type TileCacheService } from '../../cache/service.js';
import { NotFound } from '../../errors.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';

const CacheStatus = Type.Object({
  valid: Type.Boolean({ description: 'The configuration exists and MapProxy loads it' }),
  storage: Type.Union([Type.Literal('filesystem'), Type.Literal('s3')]),
  reason: Type.Optional(Type.String({ description: 'Why the configuration is not valid' })),
});

const DISABLED = 'the tile cache is not enabled: set STEWARD_MAPPROXY_PROJECTS_DIR';

/** `cache` is undefined when the cache is disabled; both routes then answer 404. */
export function cacheRoutes(cache: TileCacheService | undefined): RouteModule {
  const enabled = (): TileCacheService => {
    if (!cache) throw new NotFound(DISABLED);
    return cache;
  };
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['cache'];
    api.get(
      '',
      {
        schema: {
          tags,
          summary: "State of the project's tile cache",
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: CacheStatus, ...errorResponses },
        },
      },
      async (request) => enabled().status(request.project),
    );
    api.post(
      '/reset',
      {
        schema: {
          tags,
          summary:
            "Clear the cached tiles and rebuild the configuration from the project's layers (creating it if missing)",
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: Type.Boolean(), ...errorResponses },
        },
      },
      async (request) => {
        await enabled().reset(request.project);
        return true;
      },
    );
  };
  return { prefix: '/api/projects/:project/cache', routes };
}
