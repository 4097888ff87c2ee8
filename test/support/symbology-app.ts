/** The symbology routes in the real HTTP app (its error mapping, trailing slashes), logging nothing. */
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';

import { buildApp } from '../../src/http/app.js';
import { symbologyRoutes } from '../../src/http/routes/symbology.js';
import type { AdministeredQgis } from '../../src/services/administered-qgis.js';

export async function symbologyApp(qgis: AdministeredQgis): Promise<FastifyInstance> {
  const app = await buildApp(pino({ level: 'silent' }), [symbologyRoutes(() => qgis.symbology())], {
    apiToken: undefined,
  });
  await app.ready();
  return app;
}
