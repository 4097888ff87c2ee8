import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { DEFAULT_PAGE, type HistoryService, MAX_PAGE } from '../../services/history.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';

const Version = Type.Object({
  id: Type.String(),
  time: Type.String({ description: 'ISO 8601, UTC' }),
  who: Type.String({
    description: "The token's name, else the client's address (`steward` for Steward's own writes)",
  }),
  route: Type.String({ description: 'The route of the write, as `METHOD /path`' }),
  summary: Type.String(),
});

const VersionPage = Type.Object({
  versions: Type.Array(Version),
  next: Type.Union([Type.String(), Type.Null()], { description: 'The `before` of the next page; null on the last' }),
});

const VersionParams = Type.Object({ project: Type.String(), version: Type.String() });

const ListQuery = Type.Intersect([
  SchemaQuery,
  Type.Object({
    before: Type.Optional(Type.String({ description: 'Versions older than this one (the `next` of a page)' })),
    limit: Type.Optional(
      Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: `Versions a page, 1 to ${MAX_PAGE} (${DEFAULT_PAGE})` }),
    ),
  }),
]);

const DiffQuery = Type.Intersect([
  SchemaQuery,
  Type.Object({ to: Type.String({ description: 'The version compared with the one in the path' }) }),
]);

const RestoreQuery = Type.Intersect([
  SchemaQuery,
  Type.Object({
    force: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        description: 'Restore even when layers of the version read data files that are gone',
      }),
    ),
  }),
]);

const Names = Type.Array(Type.String());

const VersionDiff = Type.Object({
  from: Type.String(),
  to: Type.String(),
  layers: Type.Object({
    added: Names,
    removed: Names,
    changed: Type.Array(
      Type.Object({
        name: Type.String(),
        previousName: Type.Optional(Type.String()),
        properties: Type.Array(Type.String(), { description: 'Elements of the layer, and attributes as `@name`' }),
        styles: Type.Array(Type.String(), { description: 'Styles of the layer whose content changed' }),
      }),
    ),
  }),
  tree: Type.Boolean({ description: 'Whether the layer tree or the layer order changed' }),
  settings: Type.Array(Type.String(), { description: 'Project settings (top-level elements) that changed' }),
  styles: Type.Object({ added: Names, removed: Names, changed: Names }),
  text: Type.String({ description: 'The unified difference of the project files' }),
});

export function historyRoutes(history: HistoryService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '/:project/versions',
      {
        schema: {
          tags: ['history'],
          summary: "The project's versions, newest first",
          params: ProjectParams,
          querystring: ListQuery,
          response: { 200: VersionPage, ...errorResponses },
        },
      },
      async (request) => {
        const { before, limit } = request.query;
        return history.list(request.project, { before, limit: limit === undefined ? undefined : Number(limit) });
      },
    );
    api.get(
      '/:project/versions/:version',
      {
        schema: {
          tags: ['history'],
          summary: 'The project file as the version had it',
          params: VersionParams,
          querystring: SchemaQuery,
          response: { 200: Type.String({ description: 'The project XML' }), ...errorResponses },
        },
      },
      async (request, reply) =>
        reply
          .type('application/xml')
          .send((await history.content(request.project, request.params.version)).toString('utf8')),
    );
    api.get(
      '/:project/versions/:version/diff',
      {
        schema: {
          tags: ['history'],
          summary: 'How version `to` differs from this one: layers, tree, settings, styles and the text',
          params: VersionParams,
          querystring: DiffQuery,
          response: { 200: VersionDiff, ...errorResponses },
        },
      },
      async (request) => history.diff(request.project, request.params.version, request.query.to),
    );
    api.post(
      '/:project/versions/:version/restore',
      {
        schema: {
          tags: ['history'],
          summary: 'Make a new version equal to this one, styles included; QGIS Server serves it at once',
          description:
            '409 naming the layers when some read data files that are gone, unless `force=true`. A restore is undone by restoring the version before it.',
          params: VersionParams,
          querystring: RestoreQuery,
          response: { 200: Version, ...errorResponses },
        },
      },
      async (request) => history.restore(request.project, request.params.version, request.query.force === 'true'),
    );
  };
  return { prefix: '/api/projects', routes };
}
