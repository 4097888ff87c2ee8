/** GET /api/instances...: the QGIS Server instances registered through the monitoring plugin. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';

import { NotFound } from '../../errors.js';
import {
  InstanceAbout,
  InstanceLogs,
  InstanceMetadata,
  InstanceProjects,
  InstanceStats,
} from '../../monitor/protocol.js';
import type { InstanceDirectory } from '../../monitor/registry.js';
import { type SymbologyChoice } from '../../services/administered-qgis.js';
import { type RouteModule } from '../route-module.js';
import { CursorText, errorResponses } from '../schemas.js';

const InstanceParams = Type.Object({ instance: Type.String({ minLength: 1, maxLength: 64 }) });

const InstanceList = Type.Object({
  servers: Type.Array(
    Type.Object({
      id: Type.String(),
      ip: Type.String(),
      binded: Type.Integer({ description: 'Whole seconds since the instance registered' }),
      registered_at: Type.String({ format: 'date-time', description: 'When the instance registered' }),
    }),
  ),
});

const LogsQuery = Type.Object({
  since: Type.Optional(
    CursorText('The `next` of the previous answer: only the lines after it (plugins older than cursors answer all)'),
  ),
});

const DISABLED = 'Monitoring is not enabled: set STEWARD_QGISSERVER_MONITORING_PORT.';

const AdministeredQgisServer = Type.Object(
  {
    version: Type.Union([Type.String(), Type.Null()], { description: 'The version Steward writes for' }),
    source: Type.Union(
      [Type.Literal('plugin'), Type.Literal('setting'), Type.Literal('local binary'), Type.Literal('unknown')],
      {
        description:
          "Where it comes from: STEWARD_QGISSERVER_VERSION, the trusted instances' plugin, or the local qgis_mapserver",
      },
    ),
    symbology_catalogue: Type.String({ description: 'The QGIS major.minor whose symbology catalogue answers' }),
    catalogue_match: Type.String({ description: 'exact, nearest below, oldest or newest' }),
  },
  { description: 'The QGIS Server version Steward administers, whichever instance is asked' },
);

const InstanceDetail = Type.Intersect([
  InstanceMetadata,
  Type.Object({ administered_qgis_server: AdministeredQgisServer }),
]);

function administered(choice: SymbologyChoice) {
  return {
    version: choice.version ?? null,
    source: choice.source,
    symbology_catalogue: choice.catalogueVersion,
    catalogue_match: choice.match,
  };
}

type InstanceRead = (registry: InstanceDirectory, id: string, symbology: () => SymbologyChoice) => Promise<unknown>;

const perInstance: [suffix: string, summary: string, result: TSchema, read: InstanceRead][] = [
  [
    '',
    'Metadata of an instance, and the QGIS Server version Steward administers',
    InstanceDetail,
    async (registry, id, symbology) => ({
      ...(await registry.request(id, 'metadata')),
      administered_qgis_server: administered(symbology()),
    }),
  ],
  ['/stats', 'Request statistics of an instance', InstanceStats, (registry, id) => registry.request(id, 'stats')],
  [
    '/projects',
    'Projects in the cache of an instance',
    InstanceProjects,
    (registry, id) => registry.request(id, 'projects'),
  ],
  [
    '/about',
    'Settings (with their sources), fonts, memory, uptime and load of an instance',
    InstanceAbout,
    (registry, id) => registry.request(id, 'about'),
  ],
];

/**
 * `registry` is undefined when monitoring is disabled; every route then answers 404. Trailing
 * slashes are left to the app (`ignoreTrailingSlash`), like every other route.
 */
export function instanceRoutes(registry: InstanceDirectory | undefined, symbology: () => SymbologyChoice): RouteModule {
  const enabled = (): InstanceDirectory => {
    if (!registry) throw new NotFound(DISABLED, { code: 'feature_disabled' });
    return registry;
  };
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '',
      {
        schema: {
          tags: ['instances'],
          summary: 'Registered QGIS Server instances',
          response: { 200: InstanceList, ...errorResponses },
        },
      },
      async () => ({ servers: await enabled().list() }),
    );
    for (const [suffix, summary, result, read] of perInstance) {
      const schema = {
        tags: ['instances'],
        summary,
        params: InstanceParams,
        response: { 200: result, ...errorResponses },
      };
      api.get(`/:instance${suffix}`, { schema }, async (request) =>
        read(enabled(), request.params.instance, symbology),
      );
    }
    api.get(
      '/:instance/logs',
      {
        schema: {
          tags: ['instances'],
          summary: 'Log lines of an instance, newest last; with `since`, only those after it',
          params: InstanceParams,
          querystring: LogsQuery,
          response: { 200: InstanceLogs, ...errorResponses },
        },
      },
      async (request) => {
        const since = request.query.since;
        return enabled().request(request.params.instance, 'logs', since === undefined ? {} : { since: Number(since) });
      },
    );
  };
  return { prefix: '/api/instances', routes };
}
