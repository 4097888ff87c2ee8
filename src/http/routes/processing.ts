/** POST /api/processing/raster/...: histograms of raster layers and the raster calculator. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyInstance, type FastifyPluginAsync } from 'fastify';

import { type ProcessingService } from '../../services/processing.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, LayerParams, ProjectParams, SchemaQuery } from '../schemas.js';

const HistogramBody = Type.Object(
  {
    min: Type.Optional(
      Type.Number({ description: 'Lower edge of the first bin; default the smallest valid value of each band' }),
    ),
    max: Type.Optional(
      Type.Number({ description: 'Upper edge of the last bin; default the largest valid value of each band' }),
    ),
    count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100000, description: 'Number of equal-width bins; default 1000' }),
    ),
  },
  { additionalProperties: false },
);

const BandHistogram = Type.Object({
  min: Type.Number(),
  max: Type.Number(),
  values: Type.Array(Type.Number(), {
    description: 'Pixel counts per bin, each bin half-open except the last, which includes max',
  }),
});

const Histogram = Type.Record(Type.String({ description: 'Band number' }), BandHistogram);

const CalculatorBody = Type.Object(
  {
    expression: Type.String({
      minLength: 1,
      maxLength: 10000,
      description: 'QGIS raster calculator expression, bands written "layer@band"',
    }),
    output: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'GeoTIFF to create: an absolute path or /vsis3/<bucket>/<key>',
    }),
  },
  { additionalProperties: false },
);

/** Both spellings of a path, unless the app already treats them as one (ignoreTrailingSlash). */
function withAndWithoutSlash(app: FastifyInstance, path: string): string[] {
  return app.initialConfig.routerOptions?.ignoreTrailingSlash ? [path] : [path, `${path}/`];
}

export function processingRoutes(service: ProcessingService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    for (const url of withAndWithoutSlash(app, '/histogram/:project/:layer')) {
      api.post(
        url,
        {
          schema: {
            tags: ['processing'],
            summary: 'Exact histogram of every band of a raster layer',
            params: LayerParams,
            querystring: SchemaQuery,
            body: HistogramBody,
            response: { 200: Histogram, ...errorResponses },
          },
          // Every member is optional, so a POST without a body asks for the defaults.
          preValidation: async (request) => {
            request.body ??= {};
          },
        },
        async (request) => {
          return service.histogram(request.project, request.params.layer, request.body);
        },
      );
    }
    for (const url of withAndWithoutSlash(app, '/calculator/:project')) {
      api.post(
        url,
        {
          schema: {
            tags: ['processing'],
            summary: 'Create a GeoTIFF from a raster calculator expression over the project layers',
            params: ProjectParams,
            querystring: SchemaQuery,
            body: CalculatorBody,
            response: { 201: Type.Boolean(), ...errorResponses },
          },
        },
        async (request, reply) => {
          await service.calculate(request.project, request.body);
          return reply.status(201).send(true);
        },
      );
    }
  };
  return { prefix: '/api/processing/raster', routes };
}
