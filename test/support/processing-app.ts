/** For the processing route tests: a LayerLookup over fixed layers, and a bare Fastify app. */
import Fastify, { type FastifyInstance } from 'fastify';

import { NotFound } from '../../src/errors.js';
import { installErrorHandling } from '../../src/http/errors.js';
import { installProjectScope } from '../../src/http/project-scope.js';
import type { RouteModule } from '../../src/http/route-module.js';
import type { LayerLookup, ProcessingLayer } from '../../src/services/processing.js';
import type { ProjectRef } from '../../src/storage/project-store.js';

/** Routes in a Fastify app with default router options, the app's error mapping and project references. */
export async function bareApp({ prefix, routes }: RouteModule): Promise<FastifyInstance> {
  const app = Fastify();
  installErrorHandling(app);
  installProjectScope(app);
  await app.register(routes, { prefix });
  await app.ready();
  return app;
}

export class MemoryLayers implements LayerLookup {
  /** Keys are `<schema>/<project>`; the schema defaults to public. */
  constructor(private readonly projects: Record<string, ProcessingLayer[]>) {}

  async listLayers({ name, schema }: ProjectRef): Promise<ProcessingLayer[]> {
    const layers = this.projects[`${schema}/${name}`];
    if (!layers) throw new NotFound(`Project "${name}" does not exist in schema "${schema}".`);
    return layers;
  }

  async sourcesInSchema(schema: string): Promise<string[]> {
    return Object.entries(this.projects)
      .filter(([key]) => key.startsWith(`${schema}/`))
      .flatMap(([, layers]) => layers.map((layer) => layer.source));
  }

  async findLayer(project: ProjectRef, layer: string): Promise<ProcessingLayer> {
    const found = (await this.listLayers(project)).find((candidate) => candidate.name === layer);
    if (!found) throw new NotFound(`Layer "${layer}" does not exist in project "${project.name}".`);
    return found;
  }
}
