/**
 * GET /api/server: what this Steward offers, so that a client shows only what works; and, for
 * administrators, GET /api/server/settings: the settings in effect.
 */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';

const ServerFacts = Type.Object({
  storage: Type.Union([Type.Literal('filesystem'), Type.Literal('postgresql')], {
    description: 'Where projects are kept; with postgresql, project routes take a `schema`',
  }),
  cache: Type.Union([Type.Literal('mapproxy'), Type.Literal('disabled')], {
    description: 'Whether the MapProxy tile cache is enabled (STEWARD_MAPPROXY_PROJECTS_DIR)',
  }),
  monitoring: Type.Boolean({
    description: 'Whether QGIS Server instances can register (STEWARD_QGISSERVER_MONITORING_PORT)',
  }),
  data_roots: Type.Array(Type.String(), {
    description: 'The folders datasources must lie in (STEWARD_DATA_ROOTS); empty when any path is allowed',
  }),
  object_storage: Type.Boolean({
    description: 'Whether S3 object storage (`/vsis3/`) is set up: an AWS_* endpoint, region or credentials',
  }),
  database_service: Type.Optional(
    Type.String({ description: 'The PostgreSQL connection service projects are kept through, when they are' }),
  ),
  basemaps: Type.Array(
    Type.Object({
      name: Type.String(),
      type: Type.Union([Type.Literal('xyz'), Type.Literal('wms')]),
      url: Type.String({ description: 'xyz: a tile URL template with {z}, {x} and {y}; wms: the WMS endpoint' }),
      layers: Type.Optional(Type.String({ description: 'The WMS layers drawn, comma-separated' })),
      attribution: Type.Optional(Type.String()),
    }),
    { description: "The basemaps the console's maps offer under a project's layers (STEWARD_CONSOLE_BASEMAPS)" },
  ),
});
export type ServerFacts = Static<typeof ServerFacts>;

const Bytes = (description: string) => Type.Integer({ minimum: 0, description: `${description}, in bytes` });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const ServerSettings = Type.Object(
  {
    listen: Type.String({ description: 'host:port the API listens on (STEWARD_LISTEN)' }),
    log_level: Type.String({ description: 'STEWARD_LOGLEVEL' }),
    storage: Type.Object({
      kind: Type.Union([Type.Literal('filesystem'), Type.Literal('postgresql')]),
      projects_dir: Type.String({ description: 'STEWARD_QGISSERVER_PROJECTS_DIR' }),
      database_service: Nullable(Type.String({ description: 'STEWARD_PSQL_SERVICE' })),
    }),
    data: Type.Object({
      data_roots: Type.Array(Type.String(), { description: 'STEWARD_DATA_ROOTS; empty when any path is allowed' }),
      upload_root: Nullable(Type.String({ description: 'STEWARD_UPLOAD_ROOT' })),
      indirect_datasources: Type.Boolean({ description: 'Whether VRT and driver-prefixed datasources are taken' }),
      style_remote_hosts: Type.Array(Type.String(), { description: 'Hosts styles may take images from' }),
    }),
    qgis_server: Type.Object({
      url: Type.String({ description: 'STEWARD_QGISSERVER_URL, without any user or password' }),
      public_ows_url: Nullable(
        Type.String({ description: 'STEWARD_PUBLIC_OWS_URL, the address clients reach QGIS Server at, when set' }),
      ),
      fastcgi: Type.Array(Type.String(), { description: 'host:port of the FastCGI processes the API draws maps with' }),
      version: Nullable(Type.String({ description: 'STEWARD_QGISSERVER_VERSION, when set' })),
      monitoring_port: Nullable(Type.Integer({ description: 'STEWARD_QGISSERVER_MONITORING_PORT' })),
      pinned_projects: Type.Array(Type.String()),
    }),
    cache: Type.Object({
      enabled: Type.Boolean(),
      mapproxy_projects_dir: Nullable(Type.String()),
      mapproxy_url: Nullable(Type.String()),
      s3_bucket: Nullable(Type.String()),
      s3_dir: Type.String(),
    }),
    object_storage: Type.Object({
      endpoint: Nullable(Type.String({ description: 'The S3 endpoint; null for AWS' })),
      region: Nullable(Type.String()),
      credentials_set: Type.Boolean({ description: 'Whether credentials are set (never what they are)' }),
    }),
    access: Type.Object({
      token_required: Type.Boolean({ description: 'Whether STEWARD_API_TOKEN is set' }),
      oidc_issuer: Nullable(Type.String()),
      token_failures_per_minute: Type.Integer(),
    }),
    limits: Type.Object({
      body: Bytes('A JSON body'),
      publish_body: Bytes('A project or data file upload'),
      style_body: Bytes('A style upload'),
      upload_budget: Bytes('Style uploads worked on at once'),
      processing_output: Bytes('A processing output'),
      min_free_space: Bytes('Free space kept on each disk written to'),
      project_cache: Bytes('Parsed projects kept in memory'),
      body_idle_seconds: Type.Integer(),
      jobs_concurrency: Type.Integer(),
    }),
    history: Type.Object({ versions: Type.Integer(), days: Type.Integer() }),
  },
  { description: 'The effective settings; secrets (tokens, passwords, keys) are never answered' },
);
export type ServerSettings = Static<typeof ServerSettings>;

export function serverRoutes(facts: ServerFacts, settings: ServerSettings): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    app.withTypeProvider<TypeBoxTypeProvider>().get(
      '',
      {
        schema: {
          tags: ['server'],
          summary: 'What this server offers: project storage, tile cache, monitoring, data folders',
          response: { 200: ServerFacts, ...errorResponses },
        },
      },
      async () => facts,
    );
    app.withTypeProvider<TypeBoxTypeProvider>().get(
      '/settings',
      {
        schema: {
          tags: ['server'],
          summary: 'The effective settings an operator checks: storage, data folders, QGIS Server, cache, limits',
          response: { 200: ServerSettings, ...errorResponses },
        },
      },
      async () => settings,
    );
  };
  return { prefix: '/api/server', routes };
}
