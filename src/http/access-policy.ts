/**
 * What each route needs of the identity (docs/access.md), judged by the pattern the router matched
 * and the request's method, parameters and query: one table, rather than a check in every route.
 *
 * - A route with a `:project` parameter needs `read` of the project for GET, `write` otherwise
 *   (`admin` to delete the project); one that may not read it gets the 404 of a project that does
 *   not exist, so that names do not leak. A `:layer` (or the `layer` a style is given to or read
 *   for, or the `layers` of a view) hidden by every role gets the 404 of a missing layer.
 * - Listings (projects, checks, pins, jobs, a project's layers) are filtered to what one may read.
 * - Every other route needs an administrator, but those of ANY_IDENTITY and WRITERS.
 */
import { type Access, Permissions } from '../access/permissions.js';
import { type ProjectAccess } from '../access/records.js';
import { type Identity } from '../access/service.js';
import { Forbidden, NotFound } from '../errors.js';
import { layerNotFound } from '../services/layers.js';
import { DEFAULT_SCHEMA, projectRef } from '../services/projects.js';
import { projectNotFound } from '../services/repository.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { isReadMethod } from './read-methods.js';

/** Routes any identity may call: what they answer says nothing of a project, or is filtered. */
const ANY_IDENTITY: ReadonlySet<string> = new Set([
  'GET /api/projects',
  // Filtered by the route itself, before it counts and pages.
  'GET /api/project-summaries',
  'GET /api/whoami',
  // nginx's auth_requests before QGIS Server and MapProxy: the routes judge the requests themselves (ows-auth.ts).
  'GET /api/auth/ows',
  'GET /api/auth/tiles',
  // The tile cache's capabilities, judged by the route and listing the caller's layers only.
  'GET /api/auth/tiles/capabilities',
  'GET /api/server',
  'GET /api/checks',
  'GET /api/pins',
  'GET /api/jobs',
]);

/** Routes for those who may write some project: the datasources one adds layers from. */
const WRITERS: ReadonlySet<string> = new Set(['GET /api/datasources/files', 'GET /api/datasources/postgres']);

/** The symbology catalogue: QGIS's, the same for everyone. */
const CATALOGUE = '/api/symbology/';

/** Project routes whose method is not what they do: a histogram is a POST that only reads. */
const PROJECT_NEEDS: ReadonlyMap<string, Access> = new Map([
  ['POST /api/processing/raster/histogram/:project/:layer', 'read'],
  ['DELETE /api/projects/:project', 'admin'],
]);

/**
 * POSTs that change nothing though they need `write`: a style preview draws a style not stored,
 * for those who may change the styles; it is no change for the audit log.
 */
const WRITERS_READS: ReadonlySet<string> = new Set(['POST /api/projects/:project/layers/:layer/style-preview']);

/** The routes whose project is named by the body: creating one needs `admin` of its name. */
const BODY_PROJECT = 'POST /api/projects';
/** The routes of a job, whose project is the job's. */
const JOB_ROUTE = '/api/jobs/:id';

/** What a request carries that the policy reads. */
export interface RouteRequest {
  method: string;
  /** The pattern the router matched. */
  url: string;
  params: unknown;
  query: unknown;
}

function text(record: unknown, key: string): string | undefined {
  if (typeof record !== 'object' || record === null) return undefined;
  const value = (record as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

function methodOf(method: string): string {
  return method === 'HEAD' ? 'GET' : method;
}

/** The project named by a request's `:project` and `schema` query; BadRequest for a bad name. */
export function requestProject(request: RouteRequest): ProjectRef | undefined {
  const name = text(request.params, 'project');
  if (name === undefined) return undefined;
  const schema = (request.query as Record<string, unknown> | undefined)?.['schema'];
  if (schema !== undefined && typeof schema !== 'string') return projectRef(name, '');
  return projectRef(name, schema);
}

/** Refuses a project one may not use as `wanted`: 404 when one may not even read it, else 403. */
export function requireProject(identity: Identity, ref: ProjectRef, wanted: Access): void {
  const permissions = identity.permissions;
  if (!permissions.may(ref, 'read')) throw projectNotFound(ref);
  if (!permissions.may(ref, wanted))
    throw new Forbidden(`${identity.name} may not ${wanted === 'admin' ? 'administer' : wanted} project "${ref.name}"`);
}

/** What a request's identity may do; everything without access control (no identity). */
export function permissionsOf(identity: Identity | undefined): Permissions {
  return identity?.permissions ?? Permissions.ALL;
}

/** What the identity may do with a project it may read; the 404 of a missing project for one it may not. */
export function accessTo(identity: Identity | undefined, ref: ProjectRef): ProjectAccess {
  const access = permissionsOf(identity).access(ref);
  if (access === 'none') throw projectNotFound(ref);
  return access;
}

function requireLayers(permissions: Permissions, ref: ProjectRef, layers: Iterable<string>): void {
  for (const layer of layers) if (!permissions.layerReadable(ref, layer)) throw layerNotFound(ref, layer);
}

/** The identity's need of the route, judged as soon as the route is matched; what the body names is judged later. */
export function authorizeRoute(identity: Identity, request: RouteRequest): 'job' | undefined {
  if (identity.admin) return undefined;
  const key = `${methodOf(request.method)} ${request.url}`;
  const ref = requestProject(request);
  if (ref) {
    requireProject(identity, ref, PROJECT_NEEDS.get(key) ?? (methodOf(request.method) === 'GET' ? 'read' : 'write'));
    const named = [text(request.params, 'layer'), text(request.query, 'layer')].filter((layer) => layer !== undefined);
    const view = text(request.query, 'layers');
    const layers = [...named, ...(view === undefined ? [] : view.split(','))];
    requireLayers(identity.permissions, ref, layers);
    return undefined;
  }
  if (ANY_IDENTITY.has(key) || (key.startsWith('GET ') && request.url.startsWith(CATALOGUE))) return undefined;
  if (WRITERS.has(key) && identity.permissions.writesSomewhere) return undefined;
  if (key === BODY_PROJECT) return undefined;
  if (request.url === JOB_ROUTE) return 'job';
  throw new Forbidden(`${request.method} ${request.url} is for administrators`);
}

/** The project a request names in its body: the one POST /api/projects creates; BadRequest for a bad name. */
function bodyProject(request: RouteRequest, body: unknown): ProjectRef | undefined {
  if (`${request.method} ${request.url}` !== BODY_PROJECT) return undefined;
  const name = text(body, 'name');
  return name === undefined ? undefined : projectRef(name, text(body, 'schema'));
}

/** The project a request is about, named by its path or (creating one) its body; undefined for none or a bad name. */
export function projectOf(request: RouteRequest, body: unknown): ProjectRef | undefined {
  try {
    return requestProject(request) ?? bodyProject(request, body);
  } catch {
    return undefined;
  }
}

/** Whether a request may change something: any method but GET, HEAD and OPTIONS, but for the POSTs that only read. */
export function isChange(method: string, url: string): boolean {
  const route = `${method} ${url}`;
  return !isReadMethod(method) && PROJECT_NEEDS.get(route) !== 'read' && !WRITERS_READS.has(route);
}

/** The part of the judgement that needs the validated body: the project a POST /api/projects creates. */
export function authorizeBody(identity: Identity, request: RouteRequest, body: unknown): void {
  if (identity.admin) return;
  const ref = bodyProject(request, body);
  if (ref === undefined) return;
  if (!identity.permissions.may(ref, 'admin'))
    throw new Forbidden(`${identity.name} may not create project "${ref.name}": that needs admin of it`);
}

/** A job's routes: reading it needs `read` of its project, cancelling it `write`. */
export function authorizeJob(identity: Identity, request: RouteRequest, project: ProjectRef | undefined): void {
  if (identity.admin || project === undefined) return;
  const id = text(request.params, 'id') ?? '';
  if (!identity.permissions.may(project, 'read'))
    throw new NotFound(`job "${id}" does not exist`, { code: 'job_not_found' });
  requireProject(identity, project, methodOf(request.method) === 'GET' ? 'read' : 'write');
}

type Filter = (permissions: Permissions, request: RouteRequest, payload: unknown) => unknown;

const readable = (permissions: Permissions, name: unknown, schema: unknown): boolean =>
  typeof name === 'string' &&
  permissions.may({ name, schema: typeof schema === 'string' ? schema : DEFAULT_SCHEMA }, 'read');

/** A listing of a project's layers, each named by `nameOf`, filtered to those one may see. */
const readableLayers =
  (nameOf: (item: unknown) => string): Filter =>
  (permissions, request, payload) => {
    const ref = requestProject(request);
    return ref ? (payload as unknown[]).filter((item) => permissions.layerReadable(ref, nameOf(item))) : payload;
  };

/** The listings, each filtered to what the identity may read. */
const FILTERS: ReadonlyMap<string, Filter> = new Map<string, Filter>([
  [
    'GET /api/projects',
    (permissions, request, payload) =>
      (payload as unknown[]).filter((name) => readable(permissions, name, text(request.query, 'schema'))),
  ],
  [
    'GET /api/checks',
    (permissions, request, payload) =>
      Object.fromEntries(
        Object.entries(payload as Record<string, unknown>).filter(([name]) =>
          readable(permissions, name, text(request.query, 'schema')),
        ),
      ),
  ],
  [
    'GET /api/pins',
    (permissions, _request, payload) => ({
      ...(payload as object),
      pins: (payload as { pins: Array<{ name: string; schema: string }> }).pins.filter((pin) =>
        readable(permissions, pin.name, pin.schema),
      ),
    }),
  ],
  [
    'GET /api/jobs',
    (permissions, _request, payload) =>
      (payload as Array<{ project: string; schema?: string }>).filter((job) =>
        readable(permissions, job.project, job.schema),
      ),
  ],
  ['GET /api/projects/:project/layers', readableLayers((name) => String(name))],
  ['GET /api/projects/:project/layer-summaries', readableLayers((layer) => (layer as { name: string }).name)],
]);

/** A successful answer as the identity may see it. */
export function filterPayload(identity: Identity, request: RouteRequest, status: number, payload: unknown): unknown {
  if (identity.admin || status >= 300) return payload;
  const filter = FILTERS.get(`${methodOf(request.method)} ${request.url}`);
  return filter ? filter(identity.permissions, request, payload) : payload;
}
