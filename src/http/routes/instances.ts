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
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';

const InstanceParams = Type.Object({ instance: Type.String({ minLength: 1, maxLength: 64 }) });

const InstanceList = Type.Object({
  servers: Type.Array(Type.Object({ id: Type.String(), ip: Type.String(), binded: Type.Integer() })),
});

const DISABLED = 'Monitoring is not enabled: set STEWARD_QGISSERVER_MONITORING_PORT.';

type InstanceRead = (registry: InstanceDirectory, id: string) => Promise<unknown>;

const perInstance: [suffix: string, summary: string, result: TSchema, read: InstanceRead][] = [
  ['', 'Metadata of an instance', InstanceMetadata, (registry, id) => registry.request(id, 'metadata')],
  ['/logs', 'Log lines of an instance, newest last', InstanceLogs, (registry, id) => registry.request(id, 'logs')],
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
export function instanceRoutes(registry: InstanceDirectory | undefined): RouteModule {
  const enabled = (): InstanceDirectory => {
    if (!registry) throw new NotFound(DISABLED);
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
      api.get(`/:instance${suffix}`, { schema }, async (request) => read(enabled(), request.params.instance));
    }
  };
  return { prefix: '/api/instances', routes };
}
