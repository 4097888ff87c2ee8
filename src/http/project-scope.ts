import { type FastifyInstance, type preHandlerAsyncHookHandler } from 'fastify';

import { projectRef } from '../services/projects.js';
import { type ProjectRef } from '../storage/project-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The project named by the route's `:project` parameter and `schema` query; set before the handler. */
    project: ProjectRef;
  }
}

const resolveProject: preHandlerAsyncHookHandler = async (request) => {
  const { project } = request.params as { project: string };
  const { schema } = (request.query ?? {}) as { schema?: string };
  request.project = projectRef(project, schema);
};

/**
 * Gives every route with a `:project` parameter its `request.project`: the names are checked once,
 * after the request is validated and before the handler runs.
 */
export function installProjectScope(app: FastifyInstance): void {
  app.decorateRequest('project', null as unknown as ProjectRef);
  app.addHook('onRoute', (route) => {
    if (!route.url.includes('/:project')) return;
    const existing = route.preHandler === undefined ? [] : [route.preHandler].flat();
    route.preHandler = [resolveProject, ...existing];
  });
}
