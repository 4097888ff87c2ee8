import { type IncomingMessage, type ServerResponse } from 'node:http';

import { type FastifyBaseLogger } from 'fastify';

import { type Identity } from '../access/service.js';
import { BadGateway, GatewayTimeout, StewardError } from '../errors.js';
import { type MapService, type RenderedMap } from '../services/maps.js';
import { projectRef } from '../services/projects.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { type EarlyHandler, type RequestObserver } from './app.js';
import { errorReply } from './errors.js';
import { owsAccessParams } from './ows-access.js';
import { API_HEADERS } from './security-headers.js';

/** The route pattern the passthrough answers for, as metrics label it. */
export const MAP_ROUTE = '/api/projects/:project/layers/:layer/map';

export interface MapTarget {
  project: string;
  layer: string;
  schema: string | undefined;
}

const MAP_PATH = /^\/api\/projects\/([^/]+)\/layers\/([^/]+)\/map\/?$/;

/**
 * The map a `GET /api/projects/{project}/layers/{layer}/map[?schema=...]` URL asks for. Any other
 * query, or a path that is not valid percent-encoding, is left to the router to judge.
 */
export function mapTarget(url: string): MapTarget | undefined {
  const queryAt = url.indexOf('?');
  const match = MAP_PATH.exec(queryAt < 0 ? url : url.slice(0, queryAt));
  if (!match) return undefined;
  const query = new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1));
  const keys = [...query.keys()];
  if (keys.length > 1 || (keys.length === 1 && keys[0] !== 'schema')) return undefined;
  try {
    return {
      project: decodeURIComponent(match[1] ?? ''),
      layer: decodeURIComponent(match[2] ?? ''),
      schema: query.get('schema') ?? undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * `GET .../layers/{layer}/map` without Fastify's per-request work. A map is a proxied GetMap whose
 * added latency the performance target counts against QGIS Server's own; Fastify's request and
 * reply objects, hooks and stream handling cost about 0.2 ms of it on a VM whose caches are cold
 * after waiting for QGIS Server. QGIS Server's failures are answered here, so that it is not asked
 * twice; any other failure (a bad name, a missing layer) goes on to the route, which answers it
 * with the same services and the usual error handling.
 */
export function mapPassthrough(maps: MapService, log: FastifyBaseLogger, observe?: RequestObserver): EarlyHandler {
  async function serve(
    target: MapTarget,
    request: IncomingMessage,
    response: ServerResponse,
    next: () => void,
    identity: Identity | undefined,
  ): Promise<void> {
    const started = performance.now();
    let ref: ProjectRef;
    try {
      ref = projectRef(target.project, target.schema);
    } catch {
      return next();
    }
    // What the identity may not read is the route's to refuse, as a missing project or layer.
    if (identity && !(identity.permissions.may(ref, 'read') && identity.permissions.layerReadable(ref, target.layer)))
      return next();
    let map: RenderedMap | BadGateway | GatewayTimeout;
    try {
      const params =
        identity && !identity.admin ? await owsAccessParams(identity, ref, (each) => maps.mapParameter(each)) : [];
      map = await maps.render(ref, target.layer, params);
    } catch (error) {
      if (!(error instanceof BadGateway || error instanceof GatewayTimeout)) return next();
      map = error;
    }
    response.once('finish', () => {
      const responseTime = performance.now() - started;
      observe?.('GET', MAP_ROUTE, response.statusCode, responseTime / 1000);
      log.info(
        { req: { method: request.method, url: request.url }, res: { statusCode: response.statusCode }, responseTime },
        'request completed',
      );
    });
    if (map instanceof StewardError) {
      const { status, body } = errorReply(map, log);
      response
        .writeHead(status, { ...API_HEADERS, 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify(body));
      return;
    }
    response.writeHead(200, { ...API_HEADERS, ...map.headers });
    if (Buffer.isBuffer(map.body)) {
      response.end(map.body);
      return;
    }
    const body = map.body;
    // A QGIS Server that fails mid-image ends the reply, and a client that leaves ends the GetMap.
    body.once('error', () => response.destroy());
    response.once('close', () => body.destroy());
    body.pipe(response);
  }

  return (request, response, next, identity) => {
    const target = request.method === 'GET' ? mapTarget(request.url ?? '') : undefined;
    if (!target) return next();
    serve(target, request, response, next, identity).catch((error: unknown) => {
      log.error({ err: error }, 'unexpected failure');
      response.destroy();
    });
  };
}
