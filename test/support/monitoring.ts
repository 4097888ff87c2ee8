/** Helpers for monitoring tests: a scriptable fake plugin and a minimal app around the routes. */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';

import { buildApp } from '../../src/http/app.js';
import { instanceRoutes } from '../../src/http/routes/instances.js';
import { encodeLine, LineDecoder } from '../../src/monitor/lines.js';
import type { InstanceRegistry } from '../../src/monitor/registry.js';
import { SymbologyCatalogues } from '../../src/qgis/symbology/catalogue.js';
import { AdministeredQgis } from '../../src/services/administered-qgis.js';

interface Request {
  id: number;
  method: string;
}

/** Returns the message to send back for a request, or undefined to stay silent. */
export type Answerer = (request: Request) => unknown;

export const silentPlugin: Answerer = () => undefined;

/** A raw TCP client speaking the plugin's side of the protocol. */
export class FakePlugin {
  readonly requests: Request[] = [];
  /** Settles when the socket closes, whether or not the peer reset it. */
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static async connect(port: number, hello: object | undefined, answer: Answerer = silentPlugin): Promise<FakePlugin> {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    await once(socket, 'connect');
    const plugin = new FakePlugin(socket);
    const decoder = new LineDecoder({
      line: (text) => plugin.onRequest(JSON.parse(text) as Request, answer),
      overflow: () => {},
    });
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    if (hello) socket.write(encodeLine(hello));
    return plugin;
  }

  private onRequest(request: Request, answer: Answerer): void {
    this.requests.push(request);
    const reply = answer(request);
    if (reply !== undefined) this.socket.write(encodeLine(reply));
  }

  close(): void {
    this.socket.destroy();
  }
}

export function hello(token = '', qgisVersion?: string): object {
  return { type: 'hello', version: 1, token, hostname: 'fake', pid: process.pid, qgis_version: qgisVersion };
}

/**
 * The instance routes in the real HTTP app (its error mapping, trailing slashes), logging nothing.
 * The administered version is `setting` (STEWARD_QGISSERVER_VERSION), else the registry's trusted
 * plugins'.
 */
export async function instancesApp(registry: InstanceRegistry | undefined, setting?: string): Promise<FastifyInstance> {
  const qgis = await AdministeredQgis.create(await SymbologyCatalogues.load(), {
    instances: registry,
    setting,
    local: () => Promise.resolve(undefined),
  });
  const app = await buildApp(pino({ level: 'silent' }), [instanceRoutes(registry, () => qgis.symbology())], {
    apiToken: undefined,
  });
  await app.ready();
  return app;
}
