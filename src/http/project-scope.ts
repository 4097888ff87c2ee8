import { type FastifyInstance, type preHandlerHookHandler } from 'fastify';

import { projectRef } from '../services/projects.js';
import { type ProjectRef } from '../storage/project-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The project named by the route's `:project` parameter and `schema` query; set before the handler. */
    project: ProjectRef;
  }
}

/** A callback hook rather than an async one: no promise and no microtask on every project request. */
const resolveProject: preHandlerHookHandler = (request, _reply, done) => {
  const { project } = request.params as { project: string };
  const { schema } = (request.query ?? {}) as { schema?: string };
  try {
    request.project = projectRef(project, schema);
  } catch (error) {
    done(error as Error);
    return;
  }
  done();
};

/**
 * Gives every route with a `:project` parameter its `request.project`: the names are checked once,
 * after the request is validated and before the handler runs.
 */
export function installProjectScope(app: FastifyInstance): void {
  app.decorateRequest('project', null as unknown as ProjectRef);
  app.addHook('onRoute', function scopeProject(route) {
    if (!route.url.includes('/:project')) return;
    const existing = route.preHandler === undefined ? [] : [route.preHandler].flat();
    route.preHandler = [resolveProject, ...existing];
  });
}
