import { type FastifyPluginAsync } from 'fastify';
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { NotFound } from '../../errors.js';
import { type ProjectService } from '../../services/projects.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';

const NewProject = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    author: Type.String({ minLength: 1 }),
    schema: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);

const ProjectInfo = Type.Object({
  author: Type.String(),
  creation_datetime: Type.String(),
  crs: Type.String(),
  storage: Type.String(),
  schema: Type.Optional(Type.String()),
  cache: Type.String(),
});

export function projectRoutes(projects: ProjectService): FastifyPluginAsync {
  return async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '/api/projects',
      { schema: { tags: ['projects'], summary: 'Project names of a schema', querystring: SchemaQuery, response: { 200: Type.Array(Type.String()), ...errorResponses } } },
      async (request) => projects.list(request.query.schema),
    );
    api.post(
      '/api/projects',
      { schema: { tags: ['projects'], summary: 'Create a project', body: NewProject, response: { 201: Type.Boolean(), ...errorResponses } } },
      async (request, reply) => {
        await projects.create(request.body);
        return reply.status(201).send(true);
      },
    );
    api.get(
      '/api/projects/:project',
      { schema: { tags: ['projects'], summary: 'Project metadata', params: ProjectParams, querystring: SchemaQuery, response: { 200: ProjectInfo, ...errorResponses } } },
      async (request) => projects.info(projects.ref(request.params.project, request.query.schema)),
    );
    api.delete(
      '/api/projects/:project',
      { schema: { tags: ['projects'], summary: 'Delete a project with its database and styles', params: ProjectParams, querystring: SchemaQuery, response: { 200: Type.Boolean(), ...errorResponses } } },
      async (request) => {
        const ref = projects.ref(request.params.project, request.query.schema);
        if (!(await projects.remove(ref))) throw new NotFound(`project "${ref.name}" does not exist`);
        return true;
      },
    );
  };
}
