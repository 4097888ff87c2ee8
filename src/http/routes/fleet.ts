/** POST /api/projects/{project}/reload: every connected QGIS Server instance loads the project again. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type ProjectFleet } from '../../insight/fleet.js';
import { ReloadResult } from '../../monitor/protocol.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';

const FleetReload = Type.Object({
  instances: Type.Array(Type.Intersect([Type.Object({ instance: Type.String() }), ReloadResult]), {
    description: 'One answer per connected instance',
  }),
});

export function fleetRoutes(fleet: ProjectFleet): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    app.withTypeProvider<TypeBoxTypeProvider>().post(
      '/:project/reload',
      {
        schema: {
          tags: ['projects', 'instances'],
          summary: 'Have every connected QGIS Server instance drop the project from its cache and load it again',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: FleetReload, ...errorResponses },
        },
      },
      async (request) => ({ instances: await fleet.reload(request.project) }),
    );
  };
  return { prefix: '/api/projects', routes };
}
