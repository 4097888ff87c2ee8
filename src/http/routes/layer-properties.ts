import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { BLEND_MODES, type BlendMode } from '../../qgis/layer-properties.js';
import { type DatasourceRepair } from '../../services/datasource-repair.js';
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
      datasource: Type.String({
        minLength: 1,
        maxLength: 65536,
        description:
          'A new source for the layer, as "Change Data Source" sets it: styles, labels and every other property kept',
      }),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
);

const PatchQuery = Type.Object({
  ...SchemaQuery.properties,
  force: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: 'Change the datasource even when it lacks fields the styles, labels or filter use',
    }),
  ),
});

export function layerPropertiesRoutes(properties: LayerPropertiesService, repair: DatasourceRepair): RouteModule {
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
          summary: "Change a layer's properties (any of them) or its datasource, as QGIS Desktop writes them",
          params: LayerParams,
          querystring: PatchQuery,
          body: PropertiesChange,
          response: { 200: LayerProperties, ...errorResponses },
        },
      },
      async (request) => {
        // Type.Partial does not carry the blend modes' type through; the schema has checked the value.
        const { datasource, ...fields } = request.body;
        const { project, params } = request;
        if (datasource !== undefined)
          await repair.repair(project, params.layer, datasource, request.query.force === 'true');
        if (Object.keys(fields).length === 0) return properties.properties(project, params.layer);
        const blending = fields.blending as BlendMode | undefined;
        return properties.change(project, params.layer, { ...fields, blending });
      },
    );
  };
  return { prefix: '/api/projects/:project/layers', routes };
}
