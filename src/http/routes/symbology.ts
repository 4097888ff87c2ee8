import type { FastifyPluginAsync } from 'fastify';
import { SYMBOLOGY_ENDPOINTS, type SymbologyCatalogue } from '../../qgis/symbology/catalogue.js';

const RAMP = '/api/symbology/raster/singlebandpseudocolor/ramp/:name/properties';

/** The symbology description endpoints of the SPEC: read-only answers from the QGIS catalogue. */
export function symbologyRoutes(catalogue: SymbologyCatalogue): FastifyPluginAsync {
  return async (app) => {
    for (const endpoint of SYMBOLOGY_ENDPOINTS) {
      const url = `/api/symbology/${endpoint}/properties`;
      for (const path of [url, `${url}/`]) {
        app.get(path, async () => catalogue.description(endpoint));
      }
    }
    for (const path of [RAMP, `${RAMP}/`]) {
      app.get<{ Params: { name: string } }>(
        path,
        { schema: { params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } },
        async (request) => catalogue.ramp(request.params.name),
      );
    }
  };
}
