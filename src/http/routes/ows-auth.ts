/**
 * nginx's `auth_request`s. `GET /api/auth/ows`, before each request to QGIS Server (deploy/
 * nginx-qgis-server.conf): the token gate has identified the caller (401 for a wrong token, or
 * none without an anonymous role); this route judges the OWS request nginx names in
 * `X-Original-URI` (its project, by MAP, and its service and operation) and answers 204 with the
 * identity's rules for that project in `X-Steward-Access`, which nginx hands QGIS Server as the
 * STEWARD_ACCESS parameter (docs/access.md, "QGIS Server"). `GET /api/auth/tiles`, before each
 * request to MapProxy (deploy/nginx-mapproxy.conf), judges the project and layers it names
 * (docs/access.md, "The tile cache"). nginx passes on 401 and 403 only. An identity known at once
 * is answered ahead of the router (ows-auth-passthrough.ts) when it may. A capabilities document
 * refused only for the layers it would list (X-Steward-Capabilities) nginx asks again of
 * `GET /api/auth/tiles/capabilities`, which answers MapProxy's document listing the identity's layers.
 */
import { type Static, Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { Forbidden } from '../../errors.js';
import { type ProjectStore } from '../../storage/project-store.js';
import { type MapProxyCapabilities } from '../../tile-cache/capabilities.js';
import { ORIGINAL_URI_MAX_LENGTH, OWS_ACCESS_HEADER, owsAuthAnswer } from '../ows-access.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';
import {
  type CachedProjects,
  CAPABILITIES_HEADER,
  capabilitiesListing,
  CapabilitiesToFilter,
  tilesAuthAnswer,
} from '../tiles-access.js';

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

/** The headers of the capabilities route: nginx's, and those MapProxy writes a document's addresses from. */
const CapabilitiesHeaders = Type.Object({
  ...Headers.properties,
  host: Type.Optional(Type.String({ description: 'The Host the client asked nginx with' })),
  'x-forwarded-host': Type.Optional(Type.String({ description: "The client's, which MapProxy prefers to Host" })),
  'x-forwarded-proto': Type.Optional(Type.String({ description: "The client's scheme, as a proxy in front names it" })),
});

export function owsAuthRoutes(
  store: ProjectStore,
  cache: CachedProjects | undefined,
  capabilities: MapProxyCapabilities | undefined,
): RouteModule {
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
        try {
          await tilesAuthAnswer(request.identity, request.headers['x-original-uri'] ?? '', cache);
        } catch (error) {
          if (error instanceof CapabilitiesToFilter) void reply.header(CAPABILITIES_HEADER, 'filtered');
          throw error;
        }
        return reply.status(204).send();
      },
    );
    app.get<{ Headers: Static<typeof CapabilitiesHeaders> }>(
      '/tiles/capabilities',
      {
        logLevel: 'warn',
        schema: {
          tags: ['access'],
          summary:
            "The tile cache's capabilities document of X-Original-URI, listing only the layers the caller may read whole",
          description:
            'What nginx answers in place of MapProxy when the check refused a capabilities document (WMTS, TMS, WMS) ' +
            'only for the layers it lists (X-Steward-Capabilities): the request is judged again, MapProxy asked ' +
            'for that document alone, and the layers the caller may not read whole (hidden, filtered, with hidden ' +
            'attributes) taken out. Any other request is refused; 502 when MapProxy does not answer with a document.',
          headers: CapabilitiesHeaders,
          response: { 200: Type.String({ description: "MapProxy's XML document" }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { headers } = request;
        const listing = await capabilitiesListing(request.identity, headers['x-original-uri'] ?? '', cache);
        if (capabilities === undefined)
          throw new Forbidden(
            "Steward does not know where MapProxy answers (STEWARD_MAPPROXY_URL), so the tile cache's capabilities are refused to those who may not read every layer",
          );
        const client = { host: headers['x-forwarded-host'] ?? headers.host, proto: headers['x-forwarded-proto'] };
        const document = await capabilities.listing(listing.path, client, listing.listed);
        // Each identity's own: no cache in between may hand it to another.
        return reply.type(document.contentType).header('cache-control', 'no-store').send(document.body);
      },
    );
  };
  return { prefix: '/api/auth', routes };
}
