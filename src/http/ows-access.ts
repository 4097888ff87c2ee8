/**
 * The identity's rules as QGIS Server receives them (src/access/ows-rules.ts): the FastCGI
 * parameters of the API's own map requests, and nginx's `auth_request` answer (routes/ows-auth.ts,
 * and ahead of the router ows-auth-passthrough.ts).
 */
import { OWS_ACCESS_PARAMETER, owsAccessValue, owsServicesOf } from '../access/ows-rules.js';
import { type Identity, isAnonymous } from '../access/service.js';
import { Forbidden, Unauthorized } from '../errors.js';
import { projectOfMap } from '../storage/map-project.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { type ProjectStore } from '../storage/project-store.js';
import { type QgisParams } from '../transport/qgis-get.js';

/** nginx's auth_request; nginx passes on its 401 and 403 only, any other status is a 500. */
export const OWS_AUTH_ROUTE = '/api/auth/ows';

/** The longest X-Original-URI taken: nginx's own limit on a request line is far below it. */
export const ORIGINAL_URI_MAX_LENGTH = 65_536;

/** The header of nginx's answer that holds the rules. */
export const OWS_ACCESS_HEADER = 'x-steward-access';

/** The FastCGI parameters that carry `identity`'s rules (none without access control or for an administrator) for `ref` (MAP value of `map`) to QGIS Server. */
export async function owsAccessParams(
  identity: Identity | undefined,
  ref: ProjectRef,
  map: (ref: ProjectRef) => Promise<string>,
): Promise<QgisParams> {
  if (identity === undefined || identity.admin) return [];
  return [[OWS_ACCESS_PARAMETER, owsAccessValue(identity, ref, await map(ref))]];
}

/** The values of `uri`'s query parameters, names in upper case as QGIS Server reads them. */
export function queryOf(uri: string): Map<string, string[]> {
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
export function single(query: Map<string, string[]>, name: string): string | undefined {
  const values = new Set(query.get(name) ?? []);
  return values.size === 1 ? [...values][0] : undefined;
}

/** The refusal of a request to `server` that `identity` may not make: 401 for the anonymous role, to ask for a token. */
export function refused(identity: Identity, why: string, server = 'QGIS Server'): Error {
  return isAnonymous(identity)
    ? new Unauthorized(`${server} needs Authorization: Bearer <token> for this request (${why})`, {
        code: 'token_missing',
      })
    : new Forbidden(why);
}

/**
 * nginx's question: the value of X-Steward-Access for `identity`'s OWS request `uri` (nginx's
 * X-Original-URI), judged by its project (MAP) and its service and operation; undefined for none
 * (access control off, or an administrator); throws the refusal when it may not make it.
 */
export async function owsAuthAnswer(
  identity: Identity | undefined,
  uri: string,
  store: ProjectStore,
): Promise<string | undefined> {
  // Without access control, or for an administrator, QGIS Server serves everything.
  if (identity === undefined || identity.admin) return undefined;
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
