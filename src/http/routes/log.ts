/** GET /api/log: Steward's own recent log lines, for administrators, read on from a cursor. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type LineLevel, LOG_LEVELS, RECENT_BYTES, RECENT_LINES, type RecentLine, type RecentLog } from '../../log.js';
import { type RouteModule } from '../route-module.js';
import { CursorText, errorResponses } from '../schemas.js';

const LEVEL_NAMES = Object.keys(LOG_LEVELS) as LineLevel[];

const LogQuery = Type.Object({
  since: Type.Optional(
    CursorText('The `next` of the previous answer: only lines after it (0, the default, for every line kept)'),
  ),
  level: Type.Optional(
    Type.Union(
      LEVEL_NAMES.map((name) => Type.Literal(name)),
      { description: 'Only lines of this level or above (all, the default, is trace)' },
    ),
  ),
});

const LogLine = Type.Object({
  cursor: Type.Integer(),
  // TypeBox cannot type a union of mapped and listed literals: the level's type is said outright.
  level: Type.Unsafe<RecentLine['level']>(
    Type.Union([...LEVEL_NAMES, 'unknown' as const].map((name) => Type.Literal(name))),
  ),
  time: Type.String({ description: 'ISO 8601, UTC' }),
  message: Type.String(),
  fields: Type.Record(Type.String(), Type.Unknown(), { description: 'The line’s other fields: request, error, …' }),
});

const LogPage = Type.Object({
  lines: Type.Array(LogLine),
  next: Type.Integer({ description: 'The cursor to ask with next time' }),
  missed: Type.Integer({ description: 'Lines after `since` dropped from memory before they were read' }),
});

export function logRoutes(recent: RecentLog): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    app.withTypeProvider<TypeBoxTypeProvider>().get(
      '',
      {
        // A reader polls this route: its requests would otherwise fill the log it reads.
        logLevel: 'warn',
        schema: {
          tags: ['server'],
          summary: `Steward's own recent log: the last ${RECENT_LINES} lines within ${RECENT_BYTES / 1024 / 1024} MiB, of this process`,
          querystring: LogQuery,
          response: { 200: LogPage, ...errorResponses },
        },
      },
      async (request) => recent.read(Number(request.query.since ?? 0), request.query.level),
    );
  };
  return { prefix: '/api/log', routes };
}
