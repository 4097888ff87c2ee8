/** The symbology routes in the real HTTP app (its error mapping, trailing slashes), logging nothing. */
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';

import { buildApp } from '../../src/http/app.js';
import { symbologyRoutes } from '../../src/http/routes/symbology.js';
import type { SymbologyCatalogue } from '../../src/qgis/symbology/catalogue.js';

export async function symbologyApp(catalogue: SymbologyCatalogue): Promise<FastifyInstance> {
  const app = await buildApp(pino({ level: 'silent' }), [symbologyRoutes(catalogue)], { apiToken: undefined });
  await app.ready();
  return app;
}
