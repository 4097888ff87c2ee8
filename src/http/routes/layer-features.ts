import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { BadRequest } from '../../errors.js';
import { type FeatureQueries } from '../../services/feature-queries.js';
import { type MapService } from '../../services/maps.js';
import { owsAccessParams } from '../ows-access.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, LayerParams, SchemaQuery } from '../schemas.js';

/** Rows a page has at most. */
const MAX_COUNT = 500;
const DEFAULT_COUNT = 50;

const PageQuery = Type.Object({
  ...SchemaQuery.properties,
  start: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,9}$', description: 'The first feature, from 0 (WFS STARTINDEX; 0 by default)' }),
  ),
  count: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,3}$',
      description: `Features at most, 1 to ${MAX_COUNT} (WFS MAXFEATURES; 50 by default)`,
    }),
  ),
});

function countOf(text: string | undefined): number {
  const count = Number(text ?? DEFAULT_COUNT);
  if (count < 1 || count > MAX_COUNT) throw new BadRequest(`count must be between 1 and ${MAX_COUNT}, not ${text}`);
  return count;
}

const FeaturePage = Type.Object({
  total: Type.Integer({ description: 'Features of the layer in all' }),
  start: Type.Integer(),
  features: Type.Array(
    Type.Object({
      id: Type.String(),
      properties: Type.Record(Type.String(), Type.Unknown(), {
        description: 'Its attributes as QGIS Server gives them',
      }),
    }),
  ),
});

/** A vector layer's attribute table, a page at a time, as QGIS Server's WFS serves it. */
export function layerFeatureRoutes(maps: MapService, features: FeatureQueries): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '/layers/:layer/features',
      {
        schema: {
          tags: ['layers'],
          summary:
            "A page of a vector layer's features and their attributes (a WFS GetFeature answered by QGIS Server)",
          description:
            'The features in the order QGIS Server gives them, with their count in all. 409 for a layer the ' +
            "project's WFS does not publish (`wfs.layers` of `/services`).",
          params: LayerParams,
          querystring: PageQuery,
          response: { 200: FeaturePage, ...errorResponses },
        },
      },
      async (request) => {
        const { project, params, query } = request;
        const access = await owsAccessParams(request.identity, project, (ref) => maps.mapParameter(ref));
        return features.page(project, params.layer, Number(query.start ?? 0), countOf(query.count), access);
      },
    );
  };
  return { prefix: '/api/projects/:project', routes };
}
