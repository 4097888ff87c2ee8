import { type FastifyInstance } from 'fastify';
import { type Config } from './config.js';
import { buildApp } from './http/app.js';
import { createLogger } from './log.js';
import { createServices } from './services/container.js';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/** Starts the API on the configured address. */
export async function startServer(config: Config): Promise<RunningServer> {
  const logger = createLogger(config.logLevel);
  const services = await createServices(config, logger);
  const app = await buildApp(logger, services.routes, { apiToken: config.apiToken, beforeRouting: services.beforeRouting });
  await app.listen({ host: config.listen.host, port: config.listen.port });
  const address = app.server.address();
  const port = address && typeof address === 'object' ? address.port : config.listen.port;
  const host = config.listen.host === '0.0.0.0' ? '127.0.0.1' : config.listen.host;
  return {
    app,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: async () => {
      await app.close();
      await services.close();
    },
  };
}
