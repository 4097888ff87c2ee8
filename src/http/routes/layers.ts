import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type LayerService } from '../../services/layers.js';
import { type MapService } from '../../services/maps.js';
import { owsAccessParams } from '../ows-access.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, LayerParams, ProjectParams, SchemaQuery, ViewAsQuery } from '../schemas.js';

const NewLayer = Type.Object(
  {
    type: Type.Union([Type.Literal('raster'), Type.Literal('vector')]),
    name: Type.String({ minLength: 1 }),
    datasource: Type.String({ minLength: 1 }),
    crs: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^([A-Za-z]+:)?[0-9]+$' })])),
    overview: Type.Optional(Type.Boolean()),
    datetime: Type.Optional(
      Type.String({
        description:
          'Raster layers only: fixes the layer at this instant in time (QGIS temporal properties, a fixed range ' +
          '[datetime, datetime]), which the filesystem tile cache offers as its time dimension. ISO 8601 ' +
          '`YYYY-MM-DDTHH:MM:SS` with `Z`, an offset `+HH:MM`, or no zone (read as UTC), e.g. ' +
          '`2024-05-01T00:00:00Z`. Refused with 400 for a vector layer and when the tile cache is on S3, which ' +
          'cannot cache time dimensions.',
      }),
    ),
  },
  { additionalProperties: false },
);

const LayerInfo = Type.Object({
  name: Type.String(),
  type: Type.String(),
  source: Type.String(),
  crs: Type.String(),
  bbox: Type.Union([Type.String(), Type.Null()], {
    description: '`xmin ymin, xmax ymax` in `crs`; null for a layer without geometry (a table)',
  }),
  bbox_wgs84: Type.Union([Type.String(), Type.Null()], {
    description:
      '`bbox` in degrees, `west south, east north` (EPSG:4326, longitude first), its edges transformed by GDAL; ' +
      'null without a bbox or for a CRS GDAL cannot transform',
  }),
  current_style: Type.String(),
  styles: Type.Array(Type.String()),
  valid: Type.Boolean(),
  invalid_reason: Type.Optional(
    Type.String({ description: 'Why the datasource cannot be opened, when `valid` is false' }),
  ),
  bands: Type.Optional(Type.Integer()),
  data_type: Type.Optional(Type.String()),
  geometry: Type.Optional(Type.String()),
  datetime: Type.Optional(
    Type.String({ description: 'The instant a raster layer is fixed at in time, UTC (`YYYY-MM-DDTHH:MM:SSZ`)' }),
  ),
});

export function layerRoutes(layers: LayerService, maps: MapService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['layers'];
    api.get(
      '',
      {
        schema: {
          tags,
          summary: 'Layer names in project order',
          params: ProjectParams,
          querystring: ViewAsQuery,
          response: { 200: Type.Array(Type.String()), ...errorResponses },
        },
      },
      async (request) => layers.list(request.project),
    );
    api.post(
      '',
      {
        schema: {
          tags,
          summary: 'Add a layer',
          params: ProjectParams,
          querystring: SchemaQuery,
          body: NewLayer,
          response: { 201: Type.Boolean(), ...errorResponses },
        },
      },
      async (request, reply) => {
        await layers.add(request.project, request.body);
        return reply.status(201).send(true);
      },
    );
    api.get(
      '/:layer',
      {
        schema: {
          tags,
          summary: 'Layer metadata',
          params: LayerParams,
          querystring: ViewAsQuery,
          response: { 200: LayerInfo, ...errorResponses },
        },
      },
      async (request) => layers.info(request.project, request.params.layer),
    );
    api.delete(
      '/:layer',
      {
        schema: {
          tags,
          summary: 'Remove a layer',
          params: LayerParams,
          querystring: SchemaQuery,
          response: { 200: Type.Boolean(), ...errorResponses },
        },
      },
      async (request) => {
        await layers.remove(request.project, request.params.layer);
        return true;
      },
    );
    api.get(
      '/:layer/map',
      {
        schema: {
          tags,
          summary: 'PNG of a WMS GetMap of the layer (400x400, a square around its extent)',
          description:
            "The image is 400 x 400 pixels and covers the square around the layer's extent: the extent is " +
            'widened on its shorter side, about its centre, so the layer keeps its shape (as in QGIS Desktop when ' +
            'zoomed to the layer) and is not stretched. A layer with no known extent (saved without one, its ' +
            "datasource telling none) covers its CRS's area of use. The GetMap is in the layer's CRS; .../map/url gives it.",
          params: LayerParams,
          querystring: ViewAsQuery,
        },
      },
      async (request, reply) => {
        const params = await owsAccessParams(request.identity, request.project, (ref) => maps.mapParameter(ref));
        const map = await maps.render(request.project, request.params.layer, params);
        return reply.headers(map.headers).send(map.body);
      },
    );
    api.get(
      '/:layer/map/url',
      {
        schema: {
          tags,
          summary: 'The WMS GetMap URL used by .../map',
          params: LayerParams,
          querystring: SchemaQuery,
          response: { 200: Type.Object({ url: Type.String() }), ...errorResponses },
        },
      },
      async (request) => ({
        url: await maps.url(request.project, request.params.layer),
      }),
    );
  };
  return { prefix: '/api/projects/:project/layers', routes };
}

/**
 * `GET /api/projects/{project}/layer-summaries`: what `GET .../layers/{layer}` tells of each layer,
 * in one request, so that a page showing a project's layers is not one request a layer.
 */
export function layerSummaryRoutes(layers: LayerService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '',
      {
        schema: {
          tags: ['layers'],
          summary: 'Every layer one may see with its metadata, in project order',
          params: ProjectParams,
          querystring: ViewAsQuery,
          response: { 200: Type.Array(LayerInfo), ...errorResponses },
        },
      },
      async (request) => layers.infos(request.project),
    );
  };
  return { prefix: '/api/projects/:project/layer-summaries', routes };
}
