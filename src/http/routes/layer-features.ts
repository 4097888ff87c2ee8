import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { owsLayerRules } from '../../access/ows-rules.js';
import { type Identity } from '../../access/service.js';
import { BadRequest, Forbidden } from '../../errors.js';
import { FIELD_TYPES, type FieldType, type LayerField } from '../../qgis/field-types.js';
import { type FeatureQueries } from '../../services/feature-queries.js';
import { type FieldQueries } from '../../services/field-queries.js';
import { type MapService } from '../../services/maps.js';
import { type ProjectRef } from '../../storage/project-ref.js';
import { clientGoneSignal } from '../client-gone.js';
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

/** The query's `name`, a whole number from 1 to `max` (`fallback` when absent); BadRequest otherwise. */
function boundedOf(name: string, text: string | undefined, fallback: number, max: number): number {
  const value = Number(text ?? fallback);
  if (value < 1 || value > max) throw new BadRequest(`${name} must be between 1 and ${max}, not ${text}`);
  return value;
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

const FieldList = Type.Array(
  Type.Object({
    name: Type.String(),
    type: Type.Unsafe<FieldType>(
      Type.String({
        enum: [...FIELD_TYPES],
        description: 'The kind of its values, the same words whatever the provider',
      }),
    ),
    type_name: Type.String({
      description:
        "The provider's own name of the type: GDAL's (Integer64, String, DateTime), QGIS's for an expression field",
    }),
    expression: Type.Optional(
      Type.String({ description: 'An expression field: the expression QGIS computes it with' }),
    ),
  }),
);

/** Distinct values a field's answer lists at most. */
const MAX_VALUES = 10_000;
const DEFAULT_VALUES = 1000;

const FieldParams = Type.Object({ ...LayerParams.properties, field: Type.String({ minLength: 1 }) });

const ValuesQuery = Type.Object({
  ...SchemaQuery.properties,
  limit: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,5}$',
      description: `Distinct values at most, 1 to ${MAX_VALUES} (${DEFAULT_VALUES} by default)`,
    }),
  ),
});

const FieldValueList = Type.Object({
  type: Type.String({
    description:
      "GDAL's type of the field: integer, integer64, real, string, date, datetime...; boolean (values 0 and 1) for GDAL's Boolean subtype",
  }),
  values: Type.Array(Type.Union([Type.String(), Type.Number()]), {
    description:
      'Its smallest distinct values but null, sorted (numbers as numbers, text by UTF-16 code units), at most `limit`',
  }),
  truncated: Type.Boolean({ description: 'Whether the field holds more distinct values than `values`' }),
  min: Type.Optional(Type.Number({ description: 'The smallest value of a numeric field' })),
  max: Type.Optional(Type.Number({ description: 'The largest value of a numeric field' })),
});

/**
 * The values are read from the layer's source, past QGIS Server's access filter: refused to an
 * identity whose rules filter the layer's features or hide the field.
 */
function checkWholeLayer(identity: Identity | undefined, project: ProjectRef, layer: string, field: string): void {
  const rules = identity && owsLayerRules(identity, project, layer);
  if (!rules || 'read' in rules) return;
  if (rules.filter !== undefined || rules.hidden?.includes(field)) {
    throw new Forbidden(
      `your roles restrict the features or the field "${field}" of layer "${layer}": its values are those of every feature`,
    );
  }
}

/** The fields but those the identity's roles hide (QGIS Server's access filter serves it none of them). */
function visibleFields(
  identity: Identity | undefined,
  project: ProjectRef,
  layer: string,
  fields: LayerField[],
): LayerField[] {
  const rules = identity && owsLayerRules(identity, project, layer);
  const hidden = rules && !('read' in rules) ? (rules.hidden ?? []) : [];
  return fields.filter((field) => !hidden.includes(field.name));
}

/**
 * A vector layer's attribute table, a page at a time, as QGIS Server's WFS serves it; its fields,
 * and a field's values over every feature, as GDAL reads them.
 */
export function layerFeatureRoutes(
  maps: MapService,
  features: FeatureQueries,
  fieldQueries: FieldQueries,
): RouteModule {
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
        return features.page(
          project,
          params.layer,
          Number(query.start ?? 0),
          boundedOf('count', query.count, DEFAULT_COUNT, MAX_COUNT),
          access,
        );
      },
    );
    api.get(
      '/layers/:layer/fields',
      {
        schema: {
          tags: ['layers'],
          summary: "A vector layer's fields, with their types, as its source defines them",
          description:
            "Read by GDAL from the definition of the layer's source (no feature is read): the key column GDAL " +
            "takes as the features' ids first (a GeoPackage's `fid`), then the source's fields, then the " +
            "expression fields the project gives the layer. A field the identity's roles hide is left out. 422 " +
            'for a raster, a layer GDAL does not read, or a source GDAL cannot read now (`datasource_unreadable`).',
          params: LayerParams,
          querystring: SchemaQuery,
          response: { 200: FieldList, ...errorResponses },
        },
      },
      async (request) => {
        const { project, params } = request;
        return visibleFields(request.identity, project, params.layer, await fieldQueries.fields(project, params.layer));
      },
    );
    api.get(
      '/layers/:layer/fields/:field/values',
      {
        schema: {
          tags: ['layers'],
          summary: "A vector layer's field over every feature: its distinct values, minimum and maximum",
          description:
            "Read by GDAL from the layer's source (its filter applied), every feature of it, which a style's " +
            'classes are made from. 404 `field_not_found` for a field the source lacks (an expression field ' +
            'included); 422 for a raster or a layer GDAL does not read (or cannot now); 403 for an identity whose roles filter ' +
            "the layer's features or hide the field.",
          params: FieldParams,
          querystring: ValuesQuery,
          response: { 200: FieldValueList, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { project, params, query } = request;
        checkWholeLayer(request.identity, project, params.layer, params.field);
        return fieldQueries.values(
          project,
          params.layer,
          params.field,
          boundedOf('limit', query.limit, DEFAULT_VALUES, MAX_VALUES),
          clientGoneSignal(reply, 'reading the field'),
        );
      },
    );
  };
  return { prefix: '/api/projects/:project', routes };
}
