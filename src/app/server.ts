import { type FastifyBaseLogger, type FastifyInstance } from 'fastify';

import { basemapOrigins } from '../basemap-settings.js';
import { consoleBuildDir } from '../checkout.js';
import { type Config } from '../config.js';
import { apiRoutes } from '../http/api.js';
import { buildApp, inTurn } from '../http/app.js';
import { mapPassthrough } from '../http/map-passthrough.js';
import { owsAuthPassthrough } from '../http/ows-auth-passthrough.js';
import { createLogger, RecentLog } from '../log.js';
import { DEFAULT_SCHEMA } from '../services/projects.js';
import { createServices, type Services } from './services.js';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** What the routes answer from (tests reach the instance registry through it). */
  services: Services;
  /** Stops the API, then the services (Fastify's onClose). */
  close(): Promise<void>;
}

/** Starts the API on the configured address; if it cannot, closes what it opened before throwing. */
export async function startServer(config: Config): Promise<RunningServer> {
  const recentLog = new RecentLog();
  const logger = createLogger(config.logLevel, recentLog);
  const services = await createServices(config, logger, recentLog);
  const app = await listening(config, logger, services);
  const address = app.server.address();
  const port = address && typeof address === 'object' ? address.port : config.listen.port;
  const host = config.listen.host === '0.0.0.0' ? '127.0.0.1' : config.listen.host;
  return {
    app,
    services,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => app.close(),
  };
}

/**
 * The app on `services`, listening; closing it closes them (Fastify's onClose). If it cannot be
 * built or cannot listen, the services are closed before the error is thrown on.
 */
async function listening(config: Config, logger: FastifyBaseLogger, services: Services): Promise<FastifyInstance> {
  let app: FastifyInstance | undefined;
  try {
    app = await appOn(config, logger, services);
    await app.listen({ host: config.listen.host, port: config.listen.port });
    return app;
  } catch (error) {
    await (app ? app.close() : services.close()).catch((failure: unknown) =>
      logger.error({ err: failure }, 'closing what start-up opened failed'),
    );
    throw error;
  }
}

async function appOn(config: Config, logger: FastifyBaseLogger, services: Services): Promise<FastifyInstance> {
  const observe = services.metrics.observe.bind(services.metrics);
  const app = await buildApp(logger, apiRoutes(services, consoleBuildDir()), {
    apiToken: config.apiToken,
    access: services.access,
    jobProject: async (id) => {
      const job = await services.jobs.get(id).catch(() => undefined);
      return job && { name: job.project, schema: job.schema ?? DEFAULT_SCHEMA };
    },
    tokenFailures: config.tokenFailures,
    bodyIdleSeconds: config.bodyIdleSeconds,
    beforeRouting: inTurn(
      owsAuthPassthrough(services.maps.store, services.cache, logger, observe),
      mapPassthrough(services.maps, logger, observe),
    ),
    observe,
    consoleImageOrigins: basemapOrigins(config.basemaps ?? []),
  });
  app.addHook('onClose', () => services.close());
  return app;
}
