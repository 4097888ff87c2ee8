/**
 * What a plain Node server in nginx's place adds to a GetMap of the production pool: a bare
 * node:http server that sends each request to the qgis_mapserv.fcgi processes with the API's own
 * FastCGI client (src/transport/qgis-fastcgi.ts: nginx's parameters, the least busy process, a
 * connection a request) and writes the answer back, with no routing, authorisation, project check,
 * metrics or logging. The FastCGI map bench measures it beside the API and nginx, so that the API's
 * cost reads against what answering in Node, rather than in nginx, costs by itself.
 */
import { createServer } from 'node:http';
import { Readable } from 'node:stream';

import { type ServerAddress } from '../src/config.js';
import { FastcgiQgisClient } from '../src/transport/qgis-fastcgi.js';
import { type PreparedGet } from '../src/transport/qgis-get.js';
import { type BareProxy, listening } from './bare-proxy.js';

/** A bare proxy to the processes at `addresses`, for URLs of nginx at `nginxUrl`. */
export async function startBareFastcgiProxy(nginxUrl: string, addresses: readonly ServerAddress[]): Promise<BareProxy> {
  const nginx = new URL(nginxUrl).origin;
  const client = new FastcgiQgisClient(addresses);
  // Each URL's request is encoded once, as the API keeps a map's.
  const prepared = new Map<string, PreparedGet>();
  const server = createServer((request, response) => {
    const url = nginx + (request.url ?? '/');
    const get = prepared.get(url) ?? client.prepare(url);
    prepared.set(url, get);
    get().then(
      ({ status, headers, body }) => {
        response.writeHead(status, {
          'content-type': headers.get('content-type') ?? 'application/octet-stream',
          ...(Buffer.isBuffer(body) ? { 'content-length': body.byteLength } : {}),
        });
        if (body instanceof Readable) body.pipe(response);
        else response.end(body);
      },
      () => response.destroy(),
    );
  });
  return listening(server, () => client.close());
}
