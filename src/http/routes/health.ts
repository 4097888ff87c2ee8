/**
 * GET /health/live, GET /health/ready (open: they say nothing secret) and GET /metrics (behind the
 * token when one is set, see auth.ts).
 */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type ErrorCode } from '../../errors.js';
import { type HealthChecks } from '../../insight/health.js';
import { type Metrics } from '../../insight/metrics.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';

const Check = Type.Object({ ok: Type.Boolean(), detail: Type.String() });

const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
  checks: Type.Record(Type.String(), Check, {
    description: 'storage, qgis_server, disk, and mapproxy / monitoring when enabled',
  }),
  error: Type.Optional(Type.String({ description: 'With 503: the checks that failed' })),
  code: Type.Optional(Type.Literal('not_ready', { description: 'With 503: the error code (docs/errors.md)' })),
});

const NOT_READY = 'not_ready' satisfies ErrorCode;

export function healthRoutes(health: HealthChecks, metrics: Metrics): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '/health/live',
      {
        schema: {
          tags: ['server'],
          summary: 'The process answers',
          response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errorResponses },
        },
      },
      async () => ({ status: 'ok' as const }),
    );
    api.get(
      '/health/ready',
      {
        schema: {
          tags: ['server'],
          summary:
            'Whether storage, QGIS Server, MapProxy and the monitoring port answer and the disks have room; 503 naming what is down',
          response: { 200: Readiness, 503: Readiness, ...errorResponses },
        },
      },
      async (_request, reply) => {
        const readiness = await health.ready();
        if (readiness.status === 'ok') return readiness;
        const down = Object.entries(readiness.checks)
          .filter(([, check]) => !check.ok)
          .map(([, check]) => check.detail);
        return reply.status(503).send({ ...readiness, error: `down: ${down.join('; ')}`, code: NOT_READY });
      },
    );
    app.get(
      '/metrics',
      { schema: { tags: ['server'], summary: 'Prometheus metrics (text format)' } },
      async (_r, reply) => reply.type(metrics.contentType).send(await metrics.text()),
    );
  };
  return { prefix: '', routes };
}
