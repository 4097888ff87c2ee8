/**
 * The identity's rules as QGIS Server receives them (src/access/ows-rules.ts): the FastCGI
 * parameters of the API's own map requests, and nginx's `auth_request` answer (routes/ows-auth.ts).
 */
import { OWS_ACCESS_PARAMETER, owsAccessValue } from '../access/ows-rules.js';
import { type Identity } from '../access/service.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { type QgisParams } from '../transport/qgis-get.js';

/** The FastCGI parameters that carry `identity`'s rules (none without access control or for an administrator) for `ref` (MAP value of `map`) to QGIS Server. */
export async function owsAccessParams(
  identity: Identity | undefined,
  ref: ProjectRef,
  map: (ref: ProjectRef) => Promise<string>,
): Promise<QgisParams> {
  if (identity === undefined || identity.admin) return [];
  return [[OWS_ACCESS_PARAMETER, owsAccessValue(identity, ref, await map(ref))]];
}
