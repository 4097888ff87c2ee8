/**
 * Actions on every connected QGIS Server instance: POST /api/projects/{project}/reload loads the
 * project again; PUT and DELETE /api/projects/{project}/pin pin and unpin it; GET /api/pins lists
 * the pinned projects.
 */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type ProjectFleet } from '../../insight/project-fleet.js';
import { ReloadResult } from '../../monitor/protocol.js';
import { type ProjectPins } from '../../services/pins.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';

const InstanceReloads = Type.Array(Type.Intersect([Type.Object({ instance: Type.String() }), ReloadResult]), {
  description: 'One answer per connected instance',
});

const FleetReload = Type.Object({ instances: InstanceReloads });

const Pinned = Type.Object({ pinned: Type.Literal(true), instances: InstanceReloads });

const Unpinned = Type.Object({ pinned: Type.Literal(false) });

const Pins = Type.Object({
  pins: Type.Array(
    Type.Object({
      project: Type.String(),
      schema: Type.String(),
      map: Type.String({ description: 'The MAP value QGIS Server is given, as the instances list their cache' }),
      source: Type.Union([Type.Literal('api'), Type.Literal('environment')], {
        description: 'environment: named by STEWARD_PINNED_PROJECTS, which the API cannot unpin',
      }),
    }),
    { description: 'The pinned projects of every schema' },
  ),
});

export function fleetRoutes(fleet: ProjectFleet, pins: ProjectPins): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.post(
      '/projects/:project/reload',
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
    api.put(
      '/projects/:project/pin',
      {
        schema: {
          tags: ['projects', 'instances'],
          summary: 'Pin a project: every instance loads it now, and each instance as soon as it connects',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: Pinned, ...errorResponses },
        },
      },
      async (request) => ({ pinned: true as const, instances: await fleet.pin(request.project) }),
    );
    api.delete(
      '/projects/:project/pin',
      {
        schema: {
          tags: ['projects', 'instances'],
          summary: 'Unpin a project; the instances keep it cached until QGIS Server drops it',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: Unpinned, ...errorResponses },
        },
      },
      async (request) => {
        await pins.set(request.project, false);
        return { pinned: false as const };
      },
    );
    api.get(
      '/pins',
      {
        schema: {
          tags: ['projects', 'instances'],
          summary: 'The pinned projects of every schema',
          response: { 200: Pins, ...errorResponses },
        },
      },
      async () => ({ pins: await pins.list() }),
    );
  };
  return { prefix: '/api', routes };
}
