import { type FastifyPluginAsync } from 'fastify';

/** A plugin of routes and the path prefix the app registers it under. */
export interface RouteModule {
  prefix: string;
  routes: FastifyPluginAsync;
}
