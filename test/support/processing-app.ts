/** For the processing route tests: a LayerLookup over fixed layers, and a bare Fastify app. */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { NotFound, StewardError } from '../../src/errors.js';
import type { LayerLookup, ProcessingLayer } from '../../src/services/processing.js';

/** Routes in a Fastify app with default router options and the `{"error": message}` mapping. */
export async function bareApp(routes: FastifyPluginAsync): Promise<FastifyInstance> {
  const app = Fastify();
  app.setErrorHandler((error: FastifyError | StewardError, _request, reply) => {
    const status = error instanceof StewardError ? error.status : (error.statusCode ?? 500);
    return reply.status(status).send({ error: error.message });
  });
  await app.register(routes);
  await app.ready();
  return app;
}

export class MemoryLayers implements LayerLookup {
  /** Keys are `<schema>/<project>`; the schema defaults to public. */
  constructor(private readonly projects: Record<string, ProcessingLayer[]>) {}

  async listLayers(project: string, schema = 'public'): Promise<ProcessingLayer[]> {
    const layers = this.projects[`${schema}/${project}`];
    if (!layers) throw new NotFound(`Project "${project}" does not exist in schema "${schema}".`);
    return layers;
  }

  async findLayer(project: string, layer: string, schema?: string): Promise<ProcessingLayer> {
    const found = (await this.listLayers(project, schema)).find((candidate) => candidate.name === layer);
    if (!found) throw new NotFound(`Layer "${layer}" does not exist in project "${project}".`);
    return found;
  }
}
