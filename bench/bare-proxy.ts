/**
 * What a plain Node proxy adds to a GetMap: a bare node:http server that sends each request on to
 * QGIS Server with node:http's client, on connections opened ahead as the API's are, and pipes the
 * answer back, with no routing, authorisation, project check, metrics or logging. The map bench
 * measures it beside the API, so that the API's cost reads against what the extra hop costs when
 * made the usual way (the API's own client, src/transport/qgis-get.ts, skips node:http's).
 */
import { Agent, type ClientRequestArgs, createServer, get, type Server } from 'node:http';
import { type AddressInfo, type Socket, type TcpNetConnectOpts } from 'node:net';

import { Preconnector } from '../src/transport/preconnector.js';

/** node:http's keep-alive agent on connections opened ahead, as the API's are. */
class PreconnectingAgent extends Agent {
  private readonly connections = new Preconnector();

  constructor() {
    super({ keepAlive: true });
  }

  override createConnection(options: ClientRequestArgs): Socket {
    return this.connections.connect(options as TcpNetConnectOpts);
  }

  override destroy(): void {
    this.connections.destroy();
    super.destroy();
  }
}

export interface BareProxy {
  /** `url`'s path and query, asked of this proxy instead of the server it stands for. */
  through(url: string): string;
  close(): Promise<void>;
}

/** A bare proxy to the server of `qgisUrl`, on a loopback port of its own. */
export async function startBareProxy(qgisUrl: string): Promise<BareProxy> {
  const upstream = new URL(qgisUrl).origin;
  const agent = new PreconnectingAgent();
  const server = createServer((request, response) => {
    get(upstream + (request.url ?? '/'), { agent }, (answer) => {
      const length = answer.headers['content-length'];
      response.writeHead(answer.statusCode ?? 502, {
        'content-type': answer.headers['content-type'] ?? 'application/octet-stream',
        ...(length === undefined ? {} : { 'content-length': length }),
      });
      answer.pipe(response);
    }).on('error', () => response.destroy());
  });
  return listening(server, () => agent.destroy());
}

/**
 * The bare proxy `server`, listening on a loopback port of its own; `release` frees its client's
 * connections when it closes.
 */
export async function listening(server: Server, release: () => void): Promise<BareProxy> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    through: (url) => {
      const parsed = new URL(url);
      return origin + parsed.pathname + parsed.search;
    },
    close: () => {
      release();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
