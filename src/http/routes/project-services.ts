import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type TObject, type TProperties, Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type ServicesRequest } from '../../services/project-services.js';
import { type ProjectServicesService } from '../../services/project-services.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';

const Text = Type.String({ maxLength: 65536 });
const Url = Type.String({ maxLength: 4096 });
const Names = Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: 10000 });
const Size = Type.Union([Type.Integer({ minimum: 1, maximum: 1000000 }), Type.Null()], {
  description: 'Pixels; null: no limit',
});
const Format = Type.Union([Type.Literal('image/png'), Type.Literal('image/jpeg')]);

const strict = <T extends TProperties>(properties: T): TObject<T> =>
  Type.Object(properties, { additionalProperties: false });
const partial = <T extends TProperties>(properties: T) =>
  Type.Partial(Type.Object(properties, { additionalProperties: false }));
const enabled = { enabled: Type.Boolean() };

const contact = {
  person: Type.String({ maxLength: 4096 }),
  organization: Type.String({ maxLength: 4096 }),
  position: Type.String({ maxLength: 4096 }),
  mail: Type.String({ maxLength: 4096 }),
  phone: Type.String({ maxLength: 4096 }),
};

const featureInfo = {
  geometry: Type.Boolean({ description: 'GetFeatureInfo answers the geometry of each feature (WKT)' }),
  segmentize: Type.Boolean({ description: 'Curves in that geometry as segments' }),
  precision: Type.Integer({ minimum: 0, maximum: 17, description: 'Decimals of the geometry' }),
  use_form_settings: Type.Boolean({ description: 'Fields as the attribute form shows them' }),
};

const wms = {
  crs: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    maxItems: 1000,
    description: 'The CRSs the capabilities advertise (EPSG:4326); empty: the project CRS, 4326 and 3857',
  }),
  extent: Type.Union([Type.Tuple([Type.Number(), Type.Number(), Type.Number(), Type.Number()]), Type.Null()], {
    description: 'The advertised extent, [xmin, ymin, xmax, ymax] in the project CRS; null: the layers’',
  }),
  max_width: Size,
  max_height: Size,
  image_quality: Type.Union([Type.Integer({ minimum: 1, maximum: 100 }), Type.Null()], {
    description: 'JPEG quality; null: QGIS Server’s default',
  }),
  use_layer_ids: Type.Boolean({ description: 'Layers named by their ids in the services' }),
  url: Url,
};

const wfs = {
  layers: Names,
  precision: Type.Record(Type.String(), Type.Integer({ minimum: 0, maximum: 17 }), {
    description: 'Decimals of the coordinates, by published layer (QGIS Server: 6 otherwise)',
  }),
  insert: Names,
  update: Names,
  delete: Names,
  url: Url,
};

const gridFields = {
  crs: Type.String({ minLength: 1, maxLength: 64, description: 'The grid CRS (EPSG:3857)' }),
  top: Type.Number({ description: 'The top of the grid, in its CRS' }),
  left: Type.Number({ description: 'The left of the grid, in its CRS' }),
  scale_denominator: Type.Number({ exclusiveMinimum: 0, description: 'The scale denominator of level 0' }),
  last_level: Type.Integer({ minimum: 0, maximum: 30, description: 'The last zoom level (each halves the scale)' }),
};
const gridsDescription =
  'Tile grids (TileMatrixSets) the project defines; null: none defined, QGIS Server’s own then, one per WMS CRS; empty: QGIS Server publishes none (as Desktop saves no grid ticked)';
const Grid = strict(gridFields);
const GridRequest = Type.Object(
  {
    ...gridFields,
    top: Type.Optional(gridFields.top),
    left: Type.Optional(gridFields.left),
    scale_denominator: Type.Optional(gridFields.scale_denominator),
  },
  {
    additionalProperties: false,
    description: 'EPSG:3857 and EPSG:4326 are fixed by QGIS Server: their top, left and scale are its own',
  },
);

const wmts = {
  project: Type.Boolean({ description: 'The whole project as one tiled layer' }),
  groups: Names,
  layers: Names,
  formats: Type.Record(Type.String(), Type.Array(Format, { maxItems: 2 }), {
    description: 'Tile formats by layer or group (the project under ""); both when not given',
  }),
  url: Url,
};

const service = {
  title: Type.String({ maxLength: 4096 }),
  abstract: Text,
  keywords: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 256 }),
  online_resource: Url,
  fees: Text,
  access_constraints: Text,
  advertised: Type.Boolean({
    description: 'Desktop’s "Service capabilities": the capabilities tell the contact, fees and constraints',
  }),
};

const ServiceSettings = Type.Object({
  ...service,
  contact: strict(contact),
  wms: strict({ ...wms, feature_info: strict(featureInfo) }),
  wfs: strict({ ...enabled, ...wfs }),
  wcs: strict({ ...enabled, layers: Names, url: Url }),
  wmts: strict({
    ...enabled,
    ...wmts,
    grids: Type.Union([Type.Array(Grid), Type.Null()], { description: gridsDescription }),
  }),
  ogcapi_features: strict({ ...enabled, collections: Names }),
  endpoints: strict({
    wms: Type.String({
      description:
        'WMS GetCapabilities, on the advertised URL if set, else on QGIS Server’s public address (STEWARD_PUBLIC_OWS_URL), else on its internal one',
    }),
    wfs: Type.String({ description: 'WFS GetCapabilities' }),
    wcs: Type.String({ description: 'WCS GetCapabilities' }),
    wmts: Type.String({ description: 'WMTS GetCapabilities' }),
    ogcapi_features: Type.String({ description: 'The OGC API Features landing page' }),
    address: Type.Union([Type.Literal('public'), Type.Literal('internal')], {
      description:
        '`public`: the URLs without an advertised URL are on STEWARD_PUBLIC_OWS_URL; `internal`: that is not set, and they are on STEWARD_QGISSERVER_URL, which clients elsewhere may not reach',
    }),
  }),
});

const ServicesChange = Type.Partial(
  Type.Object(
    {
      ...service,
      contact: partial(contact),
      wms: partial({ ...wms, feature_info: partial(featureInfo) }),
      wfs: partial({ ...enabled, ...wfs }),
      wcs: partial({ ...enabled, layers: Names, url: Url }),
      wmts: partial({
        ...enabled,
        ...wmts,
        grids: Type.Union([Type.Array(GridRequest, { maxItems: 64 }), Type.Null()], { description: gridsDescription }),
      }),
    },
    { additionalProperties: false, minProperties: 1 },
  ),
);

export function projectServicesRoutes(services: ProjectServicesService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['projects'];
    api.get(
      '',
      {
        schema: {
          tags,
          summary: 'What QGIS Server publishes of the project through WMS, WFS, WCS, WMTS and OGC API Features',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: ServiceSettings, ...errorResponses },
        },
      },
      async (request) => services.settings(request.project),
    );
    api.patch(
      '',
      {
        schema: {
          tags,
          summary: 'Change the service settings given, as QGIS Desktop’s Project Properties > QGIS Server writes them',
          params: ProjectParams,
          querystring: SchemaQuery,
          body: ServicesChange,
          response: { 200: ServiceSettings, ...errorResponses },
        },
      },
      // Type.Partial loses the formats' and the extent's types; the schema has checked them.
      async (request) => services.update(request.project, request.body as ServicesRequest),
    );
  };
  return { prefix: '/api/projects/:project/services', routes };
}
