import { type FastifyInstance, type RouteHandlerMethod } from 'fastify';

import { withWriteOrigin } from '../services/write-origin.js';
import { isReadMethod } from './read-methods.js';

/**
 * Runs every route that may write with its origin (the identity's name, else the client's address,
 * and the route) at hand, so that a version of a project tells who made it and how, however deep
 * the write is made.
 */
export function installWriteOrigin(app: FastifyInstance): void {
  app.addHook('onRoute', function wrapWrites(route) {
    if ([route.method].flat().every(isReadMethod)) return;
    const handler = route.handler;
    const wrapped: RouteHandlerMethod = function (request, reply) {
      const origin = {
        who: request.identity?.name ?? request.ip,
        route: `${request.method} ${request.routeOptions.url ?? request.url}`,
      };
      return withWriteOrigin(origin, () => handler.call(this, request, reply));
    };
    route.handler = wrapped;
  });
}
