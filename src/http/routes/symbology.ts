import type { FastifyPluginAsync } from 'fastify';

import { SYMBOLOGY_ENDPOINTS, type SymbologyCatalogue } from '../../qgis/symbology/catalogue.js';
import { type RouteModule } from '../route-module.js';

const RAMP = '/raster/singlebandpseudocolor/ramp/:name/properties';

/**
 * The symbology description endpoints: read-only answers from the QGIS catalogue.
 * Each path is registered once; the app's ignoreTrailingSlash serves the form with a slash too.
 */
export function symbologyRoutes(catalogue: SymbologyCatalogue): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const tags = ['symbology'];
    for (const endpoint of SYMBOLOGY_ENDPOINTS) {
      app.get(`/${endpoint}/properties`, { schema: { tags } }, async () => catalogue.description(endpoint));
    }
    app.get<{ Params: { name: string } }>(
      RAMP,
      { schema: { tags, params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } },
      async (request) => catalogue.ramp(request.params.name),
    );
  };
  return { prefix: '/api/symbology', routes };
}
