/**
 * `GET /api/auth/ows`: nginx's `auth_request` before each request to QGIS Server (deploy/
 * nginx-qgis-server.conf). The token gate has identified the caller (401 for a wrong token, or
 * none without an anonymous role); this route judges the OWS request nginx names in
 * `X-Original-URI` (its project, by MAP, and its service and operation) and answers 204 with the
 * identity's rules for that project in `X-Steward-Access`, which nginx hands QGIS Server as the
 * STEWARD_ACCESS parameter (docs/access.md, "QGIS Server"). nginx passes on 401 and 403 only.
 */
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { owsAccessValue, owsServicesOf } from '../../access/ows-rules.js';
import { type Identity, isAnonymous } from '../../access/service.js';
import { Forbidden, Unauthorized } from '../../errors.js';
import { projectOfMap } from '../../storage/map-project.js';
import { type ProjectStore } from '../../storage/project-store.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';

/** The header of nginx's answer that holds the rules. */
export const OWS_ACCESS_HEADER = 'x-steward-access';
export const OWS_AUTH_ROUTE = '/api/auth/ows';

const Headers = Type.Object({
  'x-original-uri': Type.Optional(
    Type.String({ maxLength: 65_536, description: "The OWS request's path and query, as nginx's $request_uri" }),
  ),
});

/** The values of `uri`'s query parameters, names in upper case as QGIS Server reads them. */
function queryOf(uri: string): Map<string, string[]> {
  const at = uri.indexOf('?');
  const values = new Map<string, string[]>();
  if (at < 0) return values;
  let query: URLSearchParams;
  try {
    query = new URLSearchParams(uri.slice(at + 1));
  } catch {
    return values;
  }
  for (const [name, value] of query) values.set(name.toUpperCase(), [...(values.get(name.toUpperCase()) ?? []), value]);
  return values;
}

/** The one value of a parameter; undefined when absent or given differently twice. */
function single(query: Map<string, string[]>, name: string): string | undefined {
  const values = new Set(query.get(name) ?? []);
  return values.size === 1 ? [...values][0] : undefined;
}

function refused(identity: Identity, why: string): Error {
  return isAnonymous(identity)
    ? new Unauthorized(`QGIS Server needs Authorization: Bearer <token> for this request (${why})`)
    : new Forbidden(why);
}

/** The identity's rules for the OWS request `uri`; a refusal when it may not make it. */
async function judge(identity: Identity, uri: string, store: ProjectStore): Promise<string> {
  const query = queryOf(uri);
  const map = single(query, 'MAP');
  const ref = map === undefined ? undefined : await projectOfMap(store, map);
  if (map === undefined || ref === undefined || !identity.permissions.may(ref, 'read'))
    throw refused(identity, 'MAP names no project this identity may read');
  const path = uri.split('?', 1)[0] ?? '';
  const services = owsServicesOf(single(query, 'SERVICE') ?? '', single(query, 'REQUEST') ?? '', path);
  const refusedService = services.find((service) => !identity.permissions.service(service));
  if (refusedService !== undefined) throw refused(identity, `${refusedService} is refused to this identity`);
  return owsAccessValue(identity, ref, map);
}

export function owsAuthRoutes(store: ProjectStore): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    app.get<{ Headers: { 'x-original-uri'?: string } }>(
      '/ows',
      {
        schema: {
          tags: ['access'],
          summary: "nginx's auth_request: may the caller make the OWS request of X-Original-URI, and with which rules",
          headers: Headers,
          response: { 204: Type.Null({ description: 'Allowed; X-Steward-Access holds the rules' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const identity = request.identity;
        // Without access control, or for an administrator, QGIS Server serves everything.
        if (identity !== undefined && !identity.admin) {
          const rules = await judge(identity, request.headers['x-original-uri'] ?? '', store);
          void reply.header(OWS_ACCESS_HEADER, rules);
        }
        return reply.status(204).send();
      },
    );
  };
  return { prefix: '/api/auth', routes };
}
