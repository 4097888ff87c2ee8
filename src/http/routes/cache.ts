/** The tile cache of a project: its state, its reset, its seeding and truncation as jobs. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { NotFound } from '../../errors.js';
import { type JobService } from '../../jobs/service.js';
import { MAX_ZOOM, type SeedKind, selectionOf } from '../../tile-cache/seed-config.js';
import { type TileCacheService } from '../../tile-cache/service.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';
import { acceptedJob, Job } from './jobs.js';

const CacheStatus = Type.Object({
  valid: Type.Boolean({ description: 'The configuration exists and MapProxy loads it' }),
  storage: Type.Union([Type.Literal('filesystem'), Type.Literal('s3')]),
  reason: Type.Optional(Type.String({ description: 'Why the configuration is not valid' })),
});

const TileUsage = {
  tiles: Type.Integer({ minimum: 0 }),
  bytes: Type.Integer({ minimum: 0, description: 'The tiles’ file or object sizes' }),
};
const CacheUsage = Type.Object({
  storage: Type.Union([Type.Literal('filesystem'), Type.Literal('s3')]),
  layers: Type.Array(Type.Object({ name: Type.String(), ...TileUsage })),
  total: Type.Object(TileUsage),
});

const Zoom = Type.Integer({ minimum: 0, maximum: MAX_ZOOM, description: 'A level of the web mercator grid' });

const selectionFields = {
  layers: Type.Optional(
    Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      description: "Layer names; all the project's layers when missing",
    }),
  ),
  min_zoom: Zoom,
  max_zoom: Zoom,
  extent: Type.Optional(
    Type.Tuple([Type.Number(), Type.Number(), Type.Number(), Type.Number()], {
      description: "[xmin, ymin, xmax, ymax] in extent_crs; each layer's extent when missing",
    }),
  ),
  extent_crs: Type.Optional(Type.String({ pattern: '^EPSG:[0-9]{1,9}$', description: 'Default EPSG:4326' })),
};

const SeedBody = Type.Object(
  {
    ...selectionFields,
    refresh: Type.Optional(Type.Boolean({ description: 'Draw tiles already cached again (default false)' })),
  },
  { additionalProperties: false },
);
const TruncateBody = Type.Object(selectionFields, { additionalProperties: false });

/** The answer of every cache route, and of a reseed asked for, while the cache is off. */
export const CACHE_DISABLED = 'the tile cache is not enabled: set STEWARD_MAPPROXY_PROJECTS_DIR';

/** `cache` is undefined when the cache is disabled; every route then answers 404. */
export function cacheRoutes(cache: TileCacheService | undefined, jobs: JobService): RouteModule {
  const enabled = (): TileCacheService => {
    if (!cache) throw new NotFound(CACHE_DISABLED, { code: 'feature_disabled' });
    return cache;
  };
  const seedRoute = (kind: SeedKind, body: typeof SeedBody | typeof TruncateBody, summary: string) => ({
    schema: {
      tags: ['cache', 'jobs'],
      summary,
      params: ProjectParams,
      querystring: SchemaQuery,
      body,
      response: { 202: Job, ...errorResponses },
    },
  });
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
    api.get(
      '/usage',
      {
        schema: {
          tags,
          summary: 'Tiles cached for each layer of the project and their bytes, on disk or in S3',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: CacheUsage, ...errorResponses },
        },
      },
      async (request) => enabled().usage(request.project),
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
    for (const [kind, body, summary] of [
      ['seed', SeedBody, "Fill the cache of the project's layers on the selected levels: 202 with the job"],
      ['truncate', TruncateBody, 'Remove the cached tiles of the selected layers and levels: 202 with the job'],
    ] as const) {
      api.post(`/${kind}`, seedRoute(kind, body, summary), async (request, reply) => {
        const work = await enabled().planSeed(request.project, kind, selectionOf(request.body));
        const job = await jobs.submit({ kind, project: request.project, params: request.body }, work);
        return acceptedJob(reply, job);
      });
    }
  };
  return { prefix: '/api/projects/:project/cache', routes };
}
