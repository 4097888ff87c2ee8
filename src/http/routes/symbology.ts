import type { FastifyPluginAsync, FastifyReply } from 'fastify';

import { SYMBOLOGY_ENDPOINTS } from '../../qgis/symbology/catalogue.js';
import { type SymbologyChoice } from '../../services/administered-qgis.js';
import { type RouteModule } from '../route-module.js';

const RAMP = '/raster/singlebandpseudocolor/ramp/:name/properties';

/**
 * Says in headers which QGIS Server version the answer describes and where that version came from,
 * and which catalogue answered: the body stays QGIS's own description.
 */
function sayWhichQgis(reply: FastifyReply, choice: SymbologyChoice): void {
  reply.header('Steward-QGIS-Version', choice.version ?? 'unknown');
  reply.header('Steward-QGIS-Version-Source', choice.source);
  reply.header('Steward-Symbology-Catalogue', `${choice.catalogueVersion}; match=${choice.match}`);
}

/**
 * The symbology description endpoints: read-only answers from the catalogue of the
 * administered QGIS Server version. Each path is registered once; the app's ignoreTrailingSlash
 * serves the form with a slash too.
 */
export function symbologyRoutes(symbology: () => SymbologyChoice): RouteModule {
  const answering = (reply: FastifyReply) => {
    const choice = symbology();
    sayWhichQgis(reply, choice);
    return choice.catalogue;
  };
  const routes: FastifyPluginAsync = async (app) => {
    const tags = ['symbology'];
    for (const endpoint of SYMBOLOGY_ENDPOINTS) {
      app.get(`/${endpoint}/properties`, { schema: { tags } }, async (_request, reply) =>
        answering(reply).description(endpoint),
      );
    }
    app.get<{ Params: { name: string } }>(
      RAMP,
      { schema: { tags, params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } },
      async (request, reply) => answering(reply).ramp(request.params.name),
    );
  };
  return { prefix: '/api/symbology', routes };
}
