/** GET /api/project-summaries: the projects of a schema with what a listing shows of each, in pages. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type Permissions } from '../../access/permissions.js';
import { BadRequest } from '../../errors.js';
import { type ProjectSummaries, type SummaryAccess } from '../../services/project-summaries.js';
import { checkSchema, DEFAULT_SCHEMA } from '../../services/projects.js';
import { permissionsOf } from '../access-policy.js';
import { type RouteModule } from '../route-module.js';
import { AccessLevel, errorResponses, SchemaQuery } from '../schemas.js';

const MAX_SUMMARIES = 200;
const DEFAULT_SUMMARIES = 50;

const SummariesQuery = Type.Intersect([
  SchemaQuery,
  Type.Object({
    q: Type.Optional(Type.String({ maxLength: 255, description: 'Only projects whose name or title holds this' })),
    sort: Type.Optional(
      Type.Union([Type.Literal('name'), Type.Literal('layers'), Type.Literal('author')], {
        description: 'name by default',
      }),
    ),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: 'asc by default' })),
    limit: Type.Optional(
      Type.String({
        pattern: '^[1-9][0-9]{0,2}$',
        description: `Projects a page, 1 to ${MAX_SUMMARIES} (${DEFAULT_SUMMARIES})`,
      }),
    ),
    offset: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,8})$', description: 'Projects skipped (0)' })),
  }),
]);

const Summary = Type.Object({
  name: Type.String(),
  title: Type.String(),
  storage: Type.Union([Type.Literal('filesystem'), Type.Literal('postgresql')]),
  schema: Type.Optional(Type.String()),
  layers: Type.Optional(
    Type.Integer({ description: 'The layers one may see; absent when the project cannot be read' }),
  ),
  crs: Type.String(),
  author: Type.String(),
  pinned: Type.Boolean(),
  access: AccessLevel,
  error: Type.Optional(Type.String({ description: 'Why the project cannot be read' })),
});

const SummaryPage = Type.Object({
  total: Type.Integer({ description: 'The projects that match, over every page' }),
  offset: Type.Integer(),
  limit: Type.Integer(),
  projects: Type.Array(Summary),
});

/** What the identity of a request may do and see. */
function accessOf(permissions: Permissions): SummaryAccess {
  return {
    project: (ref) => permissions.access(ref),
    layer: (ref, layer) => permissions.layerReadable(ref, layer),
  };
}

export function projectSummaryRoutes(summaries: ProjectSummaries): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '',
      {
        schema: {
          tags: ['projects'],
          summary: 'The projects of a schema one may read, each with its title, layers, CRS, author and pin',
          querystring: SummariesQuery,
          response: { 200: SummaryPage, ...errorResponses },
        },
      },
      async (request) => {
        const { schema, q, sort, order, limit, offset } = request.query;
        const size = Number(limit ?? DEFAULT_SUMMARIES);
        if (size > MAX_SUMMARIES) throw new BadRequest(`limit must be at most ${MAX_SUMMARIES}`);
        const query = {
          schema: checkSchema(schema ?? DEFAULT_SCHEMA),
          q,
          sort: sort ?? 'name',
          order: order ?? 'asc',
          limit: size,
          offset: Number(offset ?? 0),
        };
        return summaries.page(query, accessOf(permissionsOf(request.identity)));
      },
    );
  };
  return { prefix: '/api/project-summaries', routes };
}
