/**
 * nginx's `auth_request`s. `GET /api/auth/ows`, before each request to QGIS Server (deploy/
 * nginx-qgis-server.conf): the token gate has identified the caller (401 for a wrong token, or
 * none without an anonymous role); this route judges the OWS request nginx names in
 * `X-Original-URI` (its project, by MAP, and its service and operation) and answers 204 with the
 * identity's rules for that project in `X-Steward-Access`, which nginx hands QGIS Server as the
 * STEWARD_ACCESS parameter (docs/access.md, "QGIS Server"). `GET /api/auth/tiles`, before each
 * request to MapProxy (deploy/nginx-mapproxy.conf), judges the project and layers it names
 * (docs/access.md, "The tile cache"). nginx passes on 401 and 403 only. An identity known at once
 * is answered ahead of the router (ows-auth-passthrough.ts) when it may.
 */
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type ProjectStore } from '../../storage/project-store.js';
import { ORIGINAL_URI_MAX_LENGTH, OWS_ACCESS_HEADER, owsAuthAnswer } from '../ows-access.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';
import { type CachedProjects, tilesAuthAnswer } from '../tiles-access.js';

const Headers = Type.Object({
  'x-original-uri': Type.Optional(
    Type.String({
      maxLength: ORIGINAL_URI_MAX_LENGTH,
      description: "The request's path and query, as nginx's $request_uri",
    }),
  ),
});

/**
 * An auth route's options. One check per request to QGIS Server or MapProxy, which nginx's access
 * log records: Fastify's two lines a request at info cost the API more CPU than the check itself.
 */
function authRoute(summary: string, allowed: string) {
  return {
    logLevel: 'warn' as const,
    schema: {
      tags: ['access'],
      summary,
      headers: Headers,
      response: { 204: Type.Null({ description: allowed }), ...errorResponses },
    },
  };
}

export function owsAuthRoutes(store: ProjectStore, cache: CachedProjects | undefined): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    app.get<{ Headers: { 'x-original-uri'?: string } }>(
      '/ows',
      authRoute(
        "nginx's auth_request: may the caller make the OWS request of X-Original-URI, and with which rules",
        'Allowed; X-Steward-Access holds the rules',
      ),
      async (request, reply) => {
        const rules = await owsAuthAnswer(request.identity, request.headers['x-original-uri'] ?? '', store);
        if (rules !== undefined) void reply.header(OWS_ACCESS_HEADER, rules);
        return reply.status(204).send();
      },
    );
    app.get<{ Headers: { 'x-original-uri'?: string } }>(
      '/tiles',
      authRoute("nginx's auth_request: may the caller make the request to MapProxy of X-Original-URI", 'Allowed'),
      async (request, reply) => {
        await tilesAuthAnswer(request.identity, request.headers['x-original-uri'] ?? '', cache);
        return reply.status(204).send();
      },
    );
  };
  return { prefix: '/api/auth', routes };
}
