/** /api/datasources/...: the datasource browser behind the add-layer form, and imports into PostGIS. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type DatasourceBrowser, MAX_PROBED_FILES } from '../../services/datasources.js';
import { type PostgresImports } from '../../services/postgres-import.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';
import { acceptedJob, Job } from './jobs.js';

const Layer = Type.Object({
  type: Type.Union([Type.Literal('raster'), Type.Literal('vector')]),
  name: Type.String({ description: 'A layer name to suggest' }),
  datasource: Type.String({ description: 'What POST .../layers takes as `datasource` to add this layer' }),
  crs: Type.Optional(Type.String({ description: 'The CRS GDAL identifies, `EPSG:<code>`' })),
  geometry: Type.Optional(Type.String({ description: 'Vector: the WKB type as QGIS names it' })),
  features: Type.Optional(Type.Integer({ description: 'Vector: feature count, when known without reading' })),
  bands: Type.Optional(Type.Integer()),
  data_type: Type.Optional(Type.String({ description: 'Raster: the pixel type of band 1' })),
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
});

const Entry = { name: Type.String(), path: Type.String() };

const Folder = Type.Object({
  path: Type.String(),
  parent: Type.Optional(Type.String({ description: 'The folder above, while it is inside the data folders' })),
  folders: Type.Array(Type.Object(Entry)),
  datasets: Type.Array(Type.Object({ ...Entry, layers: Type.Array(Layer) })),
  truncated: Type.Boolean({
    description: `True when the folder holds more than ${MAX_PROBED_FILES} files: the rest are listed without layers`,
  }),
});

const ImportBody = Type.Object(
  {
    service: Type.String({ minLength: 1, maxLength: 255, description: 'A connection service of the service files' }),
    schema: Type.String({ minLength: 1, maxLength: 63, description: 'An existing schema: lowercase, digits, _' }),
    table: Type.String({ minLength: 1, maxLength: 63, description: 'The table: lowercase letters, digits and _' }),
    source: Type.String({
      minLength: 1,
      maxLength: 4096,
      description:
        'A path in the upload root (`uploads/roads.gpkg`), or a vector datasource as POST .../layers takes it ' +
        '(an absolute path inside STEWARD_DATA_ROOTS, `/vsis3/...`, a database table)',
    }),
    layer: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'The source layer; default the first' }),
    ),
    crs: Type.Optional(Type.String({ maxLength: 32, description: 'Reproject to this CRS, `EPSG:<code>`' })),
    mode: Type.Optional(
      Type.Union([Type.Literal('create'), Type.Literal('overwrite'), Type.Literal('append')], {
        description: 'create (default; 409 when the table exists), overwrite (replace it) or append (add rows)',
      }),
    ),
  },
  { additionalProperties: false },
);

export function datasourceRoutes(browser: DatasourceBrowser, imports: PostgresImports): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['datasources'];
    api.get(
      '/files',
      {
        schema: {
          tags,
          summary: 'Sub-folders of a folder and the layers GDAL can open in its files',
          description:
            'A folder inside STEWARD_DATA_ROOTS (403 outside it, as for layers; 404 when STEWARD_DATA_ROOTS is ' +
            'unset, since the whole file system would then be open to browsing), or object storage as ' +
            '`/vsis3/` (the buckets) or `/vsis3/<bucket>/<prefix>`. Only metadata is read.',
          querystring: Type.Object({ path: Type.String({ minLength: 1, maxLength: 4096 }) }),
          response: { 200: Folder, ...errorResponses },
        },
      },
      async (request) => browser.folder(request.query.path),
    );
    api.get(
      '/postgres',
      {
        schema: {
          tags,
          summary: 'The vector tables of a PostgreSQL connection service',
          description: 'Tables and views with a geometry column, from the service file libpq reads (PGSERVICEFILE).',
          querystring: Type.Object({ service: Type.String({ minLength: 1, maxLength: 255 }) }),
          response: { 200: Type.Object({ service: Type.String(), layers: Type.Array(Layer) }), ...errorResponses },
        },
      },
      async (request) => ({ service: request.query.service, layers: await browser.postgres(request.query.service) }),
    );
    api.post(
      '/postgres/import',
      {
        schema: {
          tags,
          summary: 'Import a vector layer into a PostGIS table, as a job (202)',
          description:
            "GDAL's VectorTranslate copies the layer into the table, with a GiST index on `geom` and the primary " +
            'key `id`, in one transaction; follow the job at `Location`, cancel it with DELETE /api/jobs/{id}. ' +
            'Its result gives the rows and the datasource that adds the table as a layer.',
          body: ImportBody,
          response: { 202: Job, ...errorResponses },
        },
      },
      async (request, reply) =>
        acceptedJob(reply, await imports.start({ ...request.body, mode: request.body.mode ?? 'create' })),
    );
  };
  return { prefix: '/api/datasources', routes };
}
