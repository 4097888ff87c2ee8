/**
 * "View as" (docs/access.md): an administrator reads a project's map, legend, feature info and
 * layers as other roles would, with `view_as=role[,role...]`. The request then runs as an identity
 * holding those roles, under the administrator's name: the access policy judges it as theirs (their
 * layer listing, their hidden layers a 404), and the API's requests to QGIS Server carry their
 * rules (STEWARD_ACCESS), which the plugin's access filter applies as it does for them.
 */
import { Permissions } from '../access/permissions.js';
import { type AccessService, type Identity } from '../access/service.js';
import { BadRequest, Forbidden, StewardError, Unprocessable } from '../errors.js';
import { type RouteRequest } from './access-policy.js';

export const VIEW_AS = 'view_as';

/** The reads of a project's page in the console: what it draws, lists and asks about its map. */
const VIEW_AS_ROUTES: ReadonlySet<string> = new Set([
  'GET /api/projects/:project/wms',
  'GET /api/projects/:project/feature-info',
  'GET /api/projects/:project/layers',
  'GET /api/projects/:project/layers/:layer',
  'GET /api/projects/:project/layer-summaries',
  'GET /api/projects/:project/layers/:layer/map',
  'GET /api/projects/:project/layers/:layer/legend',
]);

/** Whether `method` on the matched route pattern `url` takes `view_as`. */
export function takesViewAs(method: string, url: string): boolean {
  return VIEW_AS_ROUTES.has(`${method === 'HEAD' ? 'GET' : method} ${url}`);
}

/** Who asks when access control is off: anyone, who administers (as GET /api/whoami says). */
const ANYONE: Identity = {
  kind: 'bootstrap',
  name: 'anyone',
  roles: [],
  admin: true,
  token: null,
  permissions: Permissions.ALL,
};

/** The roles a request asks to be viewed as; undefined when it asks for none. */
function rolesOf(request: RouteRequest): string[] | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[VIEW_AS];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new BadRequest(`${VIEW_AS} must be given once, its roles separated by commas`);
  const roles = value
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
  if (roles.length === 0) throw new Unprocessable(`${VIEW_AS} names no role`);
  return roles;
}

/**
 * The identity a request runs as: `identity` itself, or the roles `view_as` names under its name.
 * 400 on a route that does not take it, 403 for an identity that does not administer, 422 for a
 * role that does not exist. `identity` is undefined when access control is off.
 */
export function actingIdentity(
  access: AccessService,
  identity: Identity | undefined,
  request: RouteRequest,
): Identity | undefined {
  const roles = rolesOf(request);
  if (roles === undefined) return identity;
  if (!takesViewAs(request.method, request.url))
    throw new BadRequest(
      `${VIEW_AS} is taken by the reads of a project's map, legend, feature info and layers, not by ${request.method} ${request.url}`,
    );
  if (identity !== undefined && !identity.admin)
    throw new Forbidden(`${VIEW_AS} is for administrators, which ${identity.name} is not`);
  return access.viewedAs(identity ?? ANYONE, roles);
}

/** A refusal of a request viewed as other roles, saying so: the administrator may read what they may not. */
export function viewedRefusal(acting: Identity, identity: Identity | undefined, error: unknown): unknown {
  if (acting === identity || !(error instanceof StewardError) || error.status >= 500) return error;
  return new StewardError(error.status, `viewed as ${acting.roles.join(', ')}: ${error.clientMessage}`, {
    code: error.code,
  });
}
