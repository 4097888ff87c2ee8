import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { BLEND_MODES, type BlendMode } from '../../qgis/layer-properties.js';
import { type LayerPropertiesService } from '../../services/layer-properties.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, LayerParams, SchemaQuery } from '../schemas.js';

const Url = Type.String({ maxLength: 4096 });
const fields = {
  name: Type.String({ minLength: 1, description: 'Renames the layer; its styles and everything else stay' }),
  title: Type.String({ maxLength: 4096 }),
  abstract: Type.String({ maxLength: 65536 }),
  keywords: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 256 }),
  short_name: Type.String({
    maxLength: 255,
    pattern: '^([A-Za-z_][A-Za-z0-9_.-]*)?$',
    description: 'The name QGIS Server publishes the layer under (an XML name, as Desktop takes it); empty for none',
  }),
  attribution: Type.Object({ title: Type.String({ maxLength: 4096 }), url: Url }, { additionalProperties: false }),
  data_url: Type.Object({ url: Url, format: Type.String({ maxLength: 255 }) }, { additionalProperties: false }),
  metadata_urls: Type.Array(
    Type.Object(
      { url: Url, type: Type.String({ maxLength: 255 }), format: Type.String({ maxLength: 255 }) },
      { additionalProperties: false },
    ),
    { maxItems: 64 },
  ),
  scale_based_visibility: Type.Boolean(),
  min_scale: Type.Number({ minimum: 0, description: 'The most zoomed out scale drawn (its denominator)' }),
  max_scale: Type.Number({ minimum: 0, description: 'The most zoomed in scale drawn (its denominator); 0: no bound' }),
  opacity: Type.Number({ minimum: 0, maximum: 1 }),
  blending: Type.Unsafe<BlendMode>(Type.String({ enum: [...BLEND_MODES] })),
};

const LayerProperties = Type.Object({ ...fields, crs: Type.String() });

const PropertiesChange = Type.Partial(
  Type.Object(
    {
      ...fields,
      crs: Type.String({ description: 'Sets the CRS the layer is read in, as "Set Layer CRS" does (EPSG:4326)' }),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
);

export function layerPropertiesRoutes(properties: LayerPropertiesService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['layers'];
    api.get(
      '/:layer/properties',
      {
        schema: {
          tags,
          summary: "The layer's name, what QGIS Server publishes of it, its scales, opacity, blending and CRS",
          params: LayerParams,
          querystring: SchemaQuery,
          response: { 200: LayerProperties, ...errorResponses },
        },
      },
      async (request) => properties.properties(request.project, request.params.layer),
    );
    api.patch(
      '/:layer',
      {
        schema: {
          tags,
          summary: "Change a layer's properties (any of them), as QGIS Desktop's layer properties write them",
          params: LayerParams,
          querystring: SchemaQuery,
          body: PropertiesChange,
          response: { 200: LayerProperties, ...errorResponses },
        },
      },
      async (request) => {
        // Type.Partial does not carry the blend modes' type through; the schema has checked the value.
        const blending = request.body.blending as BlendMode | undefined;
        return properties.change(request.project, request.params.layer, { ...request.body, blending });
      },
    );
  };
  return { prefix: '/api/projects/:project/layers', routes };
}
