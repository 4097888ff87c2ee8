import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync, type FastifyRequest } from 'fastify';

import { type ProjectAccess } from '../../access/records.js';
import { NotFound } from '../../errors.js';
import { type ProjectInfo as Info, type ProjectService } from '../../services/projects.js';
import { accessTo } from '../access-policy.js';
import { type RouteModule } from '../route-module.js';
import { AccessLevel, errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';

const NewProject = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    author: Type.String({ minLength: 1 }),
    schema: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);

const ProjectInfo = Type.Object({
  title: Type.String(),
  abstract: Type.String(),
  author: Type.String(),
  wms_title: Type.String({ description: 'The title QGIS Server gives the WMS service; the project title when empty' }),
  wms_abstract: Type.String(),
  creation_datetime: Type.String(),
  crs: Type.String(),
  storage: Type.String(),
  schema: Type.Optional(Type.String()),
  cache: Type.String(),
  pinned: Type.Boolean({
    description: 'Every QGIS Server instance loads the project as soon as it connects (PUT/DELETE .../pin)',
  }),
  access: AccessLevel,
});

const MetadataChange = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: 4096 })),
    abstract: Type.Optional(Type.String({ maxLength: 65536 })),
    author: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    wms_title: Type.Optional(Type.String({ maxLength: 4096 })),
    wms_abstract: Type.Optional(Type.String({ maxLength: 65536 })),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** A project's metadata with what the request's identity may do with it. */
async function withAccess(request: FastifyRequest, info: Promise<Info>): Promise<Info & { access: ProjectAccess }> {
  return { ...(await info), access: accessTo(request.identity, request.project) };
}

export function projectRoutes(projects: ProjectService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '',
      {
        schema: {
          tags: ['projects'],
          summary: 'Project names of a schema',
          description:
            'The projects Steward serves, each from `<name>/<name>.qgs` (or `.qgz`) in the projects folder. ' +
            'Project files outside that layout are not listed: GET /api/checks reports them, with why and how to serve them.',
          querystring: SchemaQuery,
          response: { 200: Type.Array(Type.String()), ...errorResponses },
        },
      },
      async (request) => projects.list(request.query.schema),
    );
    api.post(
      '',
      {
        schema: {
          tags: ['projects'],
          summary: 'Create a project',
          body: NewProject,
          response: { 201: Type.Boolean(), ...errorResponses },
        },
      },
      async (request, reply) => {
        await projects.create(request.body);
        return reply.status(201).send(true);
      },
    );
    api.get(
      '/:project',
      {
        schema: {
          tags: ['projects'],
          summary: 'Project metadata',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: ProjectInfo, ...errorResponses },
        },
      },
      async (request) => withAccess(request, projects.info(request.project)),
    );
    api.patch(
      '/:project',
      {
        schema: {
          tags: ['projects'],
          summary: "Change a project's title, abstract, author or WMS service title and abstract",
          params: ProjectParams,
          querystring: SchemaQuery,
          body: MetadataChange,
          response: { 200: ProjectInfo, ...errorResponses },
        },
      },
      async (request) => withAccess(request, projects.changeMetadata(request.project, request.body)),
    );
    api.delete(
      '/:project',
      {
        schema: {
          tags: ['projects'],
          summary: 'Delete a project with its database and styles',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: Type.Boolean(), ...errorResponses },
        },
      },
      async (request) => {
        if (!(await projects.remove(request.project))) {
          throw new NotFound(`project "${request.project.name}" does not exist`, { code: 'project_not_found' });
        }
        return true;
      },
    );
  };
  return { prefix: '/api/projects', routes };
}
