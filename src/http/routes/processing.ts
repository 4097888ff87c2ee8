/** POST /api/processing/raster/...: histograms of raster layers and the raster calculator. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify';

import { type JobService } from '../../jobs/service.js';
import { type PlannedWork, type ProcessingService } from '../../services/processing.js';
import { type ProjectRef } from '../../storage/project-store.js';
import { clientGoneSignal } from '../client-gone.js';
import { prefersAsync } from '../prefer.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, LayerParams, ProjectParams, SchemaQuery } from '../schemas.js';
import { acceptedJob, Job } from './jobs.js';

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
    overwrite: Type.Optional(
      Type.Boolean({
        description: "Replace the file at output if there is one (409 otherwise); never a project layer's source",
      }),
    ),
  },
  { additionalProperties: false },
);

const OverviewResult = Type.Object({
  layer: Type.String(),
  datasource: Type.String(),
  factors: Type.Array(Type.Integer(), { description: 'Reduction factors of the overviews the raster has now' }),
  file: Type.Optional(Type.String({ description: 'The .ovr written, when the raster had no overviews before' })),
});

const PREFER_HEADER = Type.Object({
  prefer: Type.Optional(
    Type.String({ description: '"respond-async" (RFC 7240): answer 202 with a job at once, instead of when done' }),
  ),
});

interface JobSpec {
  kind: string;
  project: ProjectRef;
  params: Record<string, unknown>;
}

/**
 * Runs checked work now, or, when the client prefers it (and jobs are available), as a job
 * answered 202 at once with `Preference-Applied: respond-async`. Work run now is stopped (its
 * worker process killed, its output removed) when the client leaves before it is done.
 */
async function runOrQueue<T extends Record<string, unknown>>(
  request: FastifyRequest,
  reply: FastifyReply,
  jobs: JobService | undefined,
  spec: JobSpec,
  work: PlannedWork<T>,
): Promise<T | undefined> {
  if (!jobs || !prefersAsync(request)) {
    return work({ signal: clientGoneSignal(reply, `its ${spec.kind} run`) });
  }
  const job = await jobs.submit(spec, ({ signal, progress }) => work({ signal, progress }));
  reply.header('preference-applied', 'respond-async');
  await acceptedJob(reply, job);
  return undefined;
}

/** Both spellings of a path, unless the app already treats them as one (ignoreTrailingSlash). */
function withAndWithoutSlash(app: FastifyInstance, path: string): string[] {
  return app.initialConfig.routerOptions?.ignoreTrailingSlash ? [path] : [path, `${path}/`];
}

/** `jobs` runs the work of a request that prefers `respond-async`; without it every request is answered when done. */
export function processingRoutes(service: ProcessingService, jobs?: JobService): RouteModule {
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
        async (request, reply) => {
          const signal = clientGoneSignal(reply, 'its histogram');
          return service.histogram(request.project, request.params.layer, request.body, signal);
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
            headers: PREFER_HEADER,
            body: CalculatorBody,
            response: { 201: Type.Boolean(), 202: Job, ...errorResponses },
          },
        },
        async (request, reply) => {
          const work = await service.planCalculation(request.project, request.body);
          const spec = { kind: 'calculator', project: request.project, params: request.body };
          const done = await runOrQueue(request, reply, jobs, spec, work);
          return done === undefined ? reply : reply.status(201).send(true);
        },
      );
    }
    for (const url of withAndWithoutSlash(app, '/overviews/:project/:layer')) {
      api.post(
        url,
        {
          schema: {
            tags: ['processing'],
            summary: 'Build the overviews of a raster layer, unless it has some already',
            params: LayerParams,
            querystring: SchemaQuery,
            headers: PREFER_HEADER,
            response: { 200: OverviewResult, 202: Job, ...errorResponses },
          },
        },
        async (request, reply) => {
          const { layer } = request.params;
          const work = await service.planOverviews(request.project, layer);
          const spec = { kind: 'overviews', project: request.project, params: { layer } };
          const done = await runOrQueue(request, reply, jobs, spec, work);
          return done === undefined ? reply : done;
        },
      );
    }
  };
  return { prefix: '/api/processing/raster', routes };
}
