/**
 * `GET /api/auth/ows`: nginx's `auth_request` before each request to QGIS Server (deploy/
 * nginx-qgis-server.conf). The token gate has identified the caller (401 for a wrong token, or
 * none without an anonymous role); this route judges the OWS request nginx names in
 * `X-Original-URI` (its project, by MAP, and its service and operation) and answers 204 with the
 * identity's rules for that project in `X-Steward-Access`, which nginx hands QGIS Server as the
 * STEWARD_ACCESS parameter (docs/access.md, "QGIS Server"). nginx passes on 401 and 403 only.
 * An identity known at once is answered ahead of the router (ows-auth-passthrough.ts) when it may.
 */
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type ProjectStore } from '../../storage/project-store.js';
import { ORIGINAL_URI_MAX_LENGTH, OWS_ACCESS_HEADER, owsAuthAnswer } from '../ows-access.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';

const Headers = Type.Object({
  'x-original-uri': Type.Optional(
    Type.String({
      maxLength: ORIGINAL_URI_MAX_LENGTH,
      description: "The OWS request's path and query, as nginx's $request_uri",
    }),
  ),
});

export function owsAuthRoutes(store: ProjectStore): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    app.get<{ Headers: { 'x-original-uri'?: string } }>(
      '/ows',
      {
        // One check per request to QGIS Server, which nginx's access log records: Fastify's two
        // lines a request at info cost the API more CPU than the check itself.
        logLevel: 'warn',
        schema: {
          tags: ['access'],
          summary: "nginx's auth_request: may the caller make the OWS request of X-Original-URI, and with which rules",
          headers: Headers,
          response: { 204: Type.Null({ description: 'Allowed; X-Steward-Access holds the rules' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const rules = await owsAuthAnswer(request.identity, request.headers['x-original-uri'] ?? '', store);
        if (rules !== undefined) void reply.header(OWS_ACCESS_HEADER, rules);
        return reply.status(204).send();
      },
    );
  };
  return { prefix: '/api/auth', routes };
}
