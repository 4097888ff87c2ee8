import { type FastifyPluginAsync } from 'fastify';
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type ProjectService } from '../../services/projects.js';
import { type StyleService } from '../../services/styles.js';
import { errorResponses, LayerParams, ProjectParams, SchemaQuery } from '../schemas.js';

const StyleParams = Type.Object({ project: Type.String(), style: Type.String() });

const DefaultStyle = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1 })),
    style: Type.Optional(Type.String({ minLength: 1 })),
    geometry: Type.String({ minLength: 1, description: 'point, line or polygon' }),
  },
  { additionalProperties: false },
);

const LayerStyle = Type.Object(
  { name: Type.String({ minLength: 1 }), current: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

const Defaults = Type.Object({ point: Type.String(), line: Type.String(), polygon: Type.String() });

export function styleRoutes(projects: ProjectService, styles: StyleService): FastifyPluginAsync {
  return async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['styles'];
    const created = { 201: Type.Boolean(), ...errorResponses };
    api.get(
      '/api/projects/:project/styles',
      { schema: { tags, summary: 'Style names of the project', params: ProjectParams, querystring: SchemaQuery, response: { 200: Type.Array(Type.String()), ...errorResponses } } },
      async (request) => styles.list(projects.ref(request.params.project, request.query.schema)),
    );
    // The style body is checked by the style codec, which names the offending member or property.
    api.post(
      '/api/projects/:project/styles',
      { schema: { tags, summary: 'Add a style (its name in the body)', params: ProjectParams, querystring: SchemaQuery, body: Type.Unknown({ description: 'a vector or raster style (SPEC.md), checked by the style codec' }), response: created } },
      async (request, reply) => {
        await styles.add(projects.ref(request.params.project, request.query.schema), request.body);
        return reply.status(201).send(true);
      },
    );
    api.get(
      '/api/projects/:project/styles/default',
      { schema: { tags, summary: 'Default style per geometry', params: ProjectParams, querystring: SchemaQuery, response: { 200: Defaults, ...errorResponses } } },
      async (request) => styles.defaults(projects.ref(request.params.project, request.query.schema)),
    );
    api.post(
      '/api/projects/:project/styles/default',
      { schema: { tags, summary: 'Set the default style of a geometry', params: ProjectParams, querystring: SchemaQuery, body: DefaultStyle, response: { 200: Type.Boolean(), ...errorResponses } } },
      async (request) => {
        await styles.setDefault(projects.ref(request.params.project, request.query.schema), request.body);
        return true;
      },
    );
    api.get(
      '/api/projects/:project/styles/:style',
      { schema: { tags, summary: 'A style, in the shape that created it', params: StyleParams, querystring: SchemaQuery } },
      async (request) => styles.get(projects.ref(request.params.project, request.query.schema), request.params.style),
    );
    api.post(
      '/api/projects/:project/styles/:style',
      { schema: { tags, summary: 'Add a style named by the path', params: StyleParams, querystring: SchemaQuery, body: Type.Unknown({ description: 'a vector or raster style (SPEC.md), checked by the style codec' }), response: created } },
      async (request, reply) => {
        await styles.add(projects.ref(request.params.project, request.query.schema), request.body, request.params.style);
        return reply.status(201).send(true);
      },
    );
    api.delete(
      '/api/projects/:project/styles/:style',
      { schema: { tags, summary: 'Remove a style (refused while a layer draws with it)', params: StyleParams, querystring: SchemaQuery, response: { 200: Type.Boolean(), ...errorResponses } } },
      async (request) => {
        await styles.remove(projects.ref(request.params.project, request.query.schema), request.params.style);
        return true;
      },
    );
    api.post(
      '/api/projects/:project/layers/:layer/style',
      { schema: { tags, summary: "Add a style to a layer's style manager, optionally as its current style", params: LayerParams, querystring: SchemaQuery, body: LayerStyle, response: { 200: Type.Boolean(), ...errorResponses } } },
      async (request) => {
        await styles.applyToLayer(projects.ref(request.params.project, request.query.schema), request.params.layer, request.body);
        return true;
      },
    );
  };
}
