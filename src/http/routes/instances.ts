/** GET /api/instances...: the QGIS Server instances registered through the monitoring plugin. */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from '@sinclair/typebox';
import { NotFound } from '../../errors.js';
import { InstanceLogs, InstanceMetadata, InstanceStats } from '../../monitor/protocol.js';
import type { InstanceRegistry } from '../../monitor/registry.js';

const InstanceParams = Type.Object({ instance: Type.String({ minLength: 1, maxLength: 64 }) });

const InstanceList = Type.Object({
  servers: Type.Array(Type.Object({ id: Type.String(), ip: Type.String(), binded: Type.Integer() })),
});

const ErrorBody = Type.Object({ error: Type.String() });

const DISABLED = 'Monitoring is not enabled: set STEWARD_QGISSERVER_MONITORING_PORT.';

type InstanceRead = (registry: InstanceRegistry, id: string) => Promise<unknown>;

const perInstance: [suffix: string, result: TSchema, read: InstanceRead][] = [
  ['', InstanceMetadata, (registry, id) => registry.metadata(id)],
  ['/logs', InstanceLogs, (registry, id) => registry.logs(id)],
  ['/stats', InstanceStats, (registry, id) => registry.stats(id)],
];

/** Each path is served with and without a trailing slash (DESIGN.md section 4). */
function withAndWithoutSlash(path: string): string[] {
  return [path, `${path}/`];
}

export function instanceRoutes(registry: InstanceRegistry | undefined): FastifyPluginAsync {
  const enabled = (): InstanceRegistry => {
    if (!registry) throw new NotFound(DISABLED);
    return registry;
  };
  return async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const listSchema = { response: { 200: InstanceList, '4xx': ErrorBody } };
    for (const url of withAndWithoutSlash('/api/instances')) {
      api.get(url, { schema: listSchema }, async () => ({ servers: enabled().list() }));
    }
    for (const [suffix, result, read] of perInstance) {
      const schema = { params: InstanceParams, response: { 200: result, '4xx': ErrorBody, '5xx': ErrorBody } };
      for (const url of withAndWithoutSlash(`/api/instances/:instance${suffix}`)) {
        api.get(url, { schema }, async (request) => read(enabled(), request.params.instance));
      }
    }
  };
}
