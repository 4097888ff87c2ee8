import { type FastifyBaseLogger } from 'fastify';

import { BadGateway, GatewayTimeout, StewardError } from '../errors.js';
import { type MapService, type RenderedMap } from '../services/maps.js';
import { projectRef } from '../services/projects.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { type EarlyHandler, type RequestObserver } from './app.js';
import { answeredEarly, type HookEquivalent, logAnswered, READ_HOOK_EQUIVALENTS } from './early-answers.js';
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

/** What the passthrough does in place of each hook of the map route (early-answers.ts). */
export const HOOK_EQUIVALENTS: readonly HookEquivalent[] = [
  {
    hook: 'onRequest',
    name: 'identifyRequest',
    here: "only a request whose identity is known at once reaches the passthrough, which checks it may read the project and layer; the rest go to the route's check",
  },
  { hook: 'preHandler', name: 'resolveProject', here: "projectRef() on the path's names and the schema" },
  { hook: 'onRoute', name: 'scopeProject', here: 'nothing more: it gives the route resolveProject, above' },
  ...READ_HOOK_EQUIVALENTS,
];

/**
 * `GET .../layers/{layer}/map` without Fastify's per-request work, which costs more than 0.1 ms of
 * CPU a map (bench/results/issue-44-map-passthrough-2026-12-06.md). It does what the app's hooks
 * would (HOOK_EQUIVALENTS) and logs as Fastify does, under the same request id. QGIS Server's
 * failures are answered here, so that it is not asked twice; any other failure (a bad name, a
 * missing layer) goes on to the route, which answers it with the same services and the usual
 * error handling.
 */
export function mapPassthrough(maps: MapService, logger: FastifyBaseLogger, observe?: RequestObserver): EarlyHandler {
  return answeredEarly(logger, async (request, response, next, identity, requestId) => {
    const target = request.method === 'GET' ? mapTarget(request.url ?? '') : undefined;
    if (!target) return next();
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
    const log = logAnswered(logger, observe, MAP_ROUTE, request, response, requestId, started);
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
  });
}
