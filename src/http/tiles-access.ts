/**
 * nginx's question before each request to MapProxy (deploy/nginx-mapproxy.conf, `auth_request` to
 * `GET /api/auth/tiles`): may the identity get what the request names of the tile cache? MapProxy
 * serves each project at `/<app>/` (TileCacheService.appName) and fills its tiles with the tile
 * cache token, which reads every layer whole: a layer's tiles are drawn once, for everyone.
 */
import { owsLayerRules, owsServicesOf } from '../access/ows-rules.js';
import { type OwsService } from '../access/records.js';
import { type Identity } from '../access/service.js';
import { Forbidden } from '../errors.js';
import { type ProjectRef } from '../storage/project-ref.js';
import { queryOf, refused, single } from './ows-access.js';

export const TILES_AUTH_ROUTE = '/api/auth/tiles';

/**
 * The header of the check's 403 when the request is a capabilities document refused only for the
 * layers it would list: nginx then asks `GET /api/auth/tiles/capabilities` for it, listing the
 * identity's layers (deploy/nginx-mapproxy.conf).
 */
export const CAPABILITIES_HEADER = 'x-steward-capabilities';

/** A capabilities document refused whole for the layers it lists that the identity may not read. */
export class CapabilitiesToFilter extends Forbidden {}

/** What the check asks of the tile cache (TileCacheService). */
export interface CachedProjects {
  /** The stored projects MapProxy serves at `/<app>/`. */
  projectsOfApp(app: string): Promise<ProjectRef[]>;
  /** The layers of the project's MapProxy configuration. */
  layerNames(ref: ProjectRef): Promise<string[]>;
}

const SERVER = 'the tile cache';
/** MapProxy's handlers that take the operation from the query (WMS, and WMTS's KVP at `service` and `ows`). */
const KVP_HANDLERS: ReadonlySet<string> = new Set(['service', 'ows', 'wms']);
/** MapProxy's handlers of tiles in the path: TMS (`tms`, `tiles`) and RESTful WMTS. */
const PATH_HANDLERS: ReadonlySet<string> = new Set(['tiles', 'tms', 'wmts']);
/** The operations (REQUEST, lowered as MapProxy does) about the layers they name alone. */
const LAYER_OPERATIONS: ReadonlySet<string> = new Set([
  'getmap',
  'map',
  'getfeatureinfo',
  'feature_info',
  'getlegendgraphic',
  'gettile',
]);
/** A tile's path ends so (`.../z/x/y.png`), and a RESTful WMTS feature info's (`.../z/x/y/i/j.html`). */
const TILE_PATH = /\/-?\d+\/-?\d+\/-?\d+\.\w+$/;
/** MapProxy's handlers of tiles (TMS, RESTful WMTS and KML): a role's `WMTS` rule is theirs. */
const TILE_HANDLERS: ReadonlySet<string> = new Set(['tiles', 'tms', 'wmts', 'kml']);
/** A RESTful WMTS feature info's path ends so (`.../z/x/y/i/j.html`). */
const FEATURE_INFO_PATH = /\/-?\d+\/-?\d+\/-?\d+\/-?\d+\/-?\d+\.\w+$/;
/** The parameters naming layers: WMS's LAYERS and QUERY_LAYERS, LAYER of GetLegendGraphic and WMTS. */
const LAYER_PARAMETERS = ['LAYER', 'LAYERS', 'QUERY_LAYERS'];
/**
 * A TMS capabilities document's path as MapProxy matches it (request/tile.py, TMSRequest's
 * capabilities_re, with Python's `.` and `$`): with a layer, that layer's document; without, the
 * service's list of every layer.
 */
const TMS_CAPABILITIES = /^[^\n]*\/1\.0\.0\/?(?:\/(?<layer>[^/]+))?(?:\/[^/]+)?(?=\n?$)/;
/** The WMS versions a capabilities document is asked for in: `1.3.0`. */
const WMS_VERSION = /^\d\.\d\.\d$/;

/** A request to MapProxy as MapProxy reads it. */
export interface TileRequest {
  /** The app, the path's first segment; '' for the root, which lists the apps. */
  app: string;
  /** Every name the request could give a layer by: its path's segments and its layer parameters. */
  names: Set<string>;
  /**
   * Whether only the layers it names are served (a tile, a map, a legend, a feature info); a
   * capabilities document, the demo, an app's page or anything else may show every layer.
   */
  namedOnly: boolean;
  /** The services and operations a role may be refused that the request could be served as. */
  services: OwsService[];
  /**
   * For a capabilities document listing the app's layers (WMTS, RESTful or KVP; TMS; WMS), the
   * path and query that ask MapProxy for that document alone, whatever else the request holds.
   */
  capabilities?: string;
}

/**
 * The path of `uri` as MapProxy reads it: without the query and fragment (urlsplit, as gunicorn
 * splits it), percent-decoded to bytes, one character a byte (PEP 3333's PATH_INFO, which MapProxy
 * takes as it is). nginx's X-Original-URI reaches Node one character a byte too.
 */
function wsgiPath(uri: string): string {
  const path = uri.split('#', 1)[0]?.split('?', 1)[0] ?? '';
  return path.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The names of the layer parameters: each value, its parts between commas, and all joined as MapProxy joins them. */
function parameterNames(query: Map<string, string[]>): string[] {
  return LAYER_PARAMETERS.flatMap((name) => {
    const values = query.get(name) ?? [];
    const joined = values.join(',');
    return [joined, ...values, ...joined.split(',')];
  });
}

/**
 * The services a request to MapProxy's `handler` could be served as: a KVP request's every
 * SERVICE (WMS when none, as MapProxy defaults) with every REQUEST, since MapProxy takes one of
 * them; the tile handlers' WMTS, and GetFeatureInfo for a RESTful WMTS feature info.
 */
function servicesOf(handler: string, rest: string, query: Map<string, string[]>): OwsService[] {
  if (KVP_HANDLERS.has(handler)) {
    const services = query.get('SERVICE') ?? ['WMS'];
    const operations = query.get('REQUEST') ?? [''];
    return services.flatMap((service) => operations.flatMap((operation) => owsServicesOf(service, operation)));
  }
  if (!TILE_HANDLERS.has(handler)) return [];
  return handler === 'wmts' && FEATURE_INFO_PATH.test(rest) ? ['WMTS', 'GetFeatureInfo'] : ['WMTS'];
}

/** `segment` (a byte a character, as wsgiPath reads it) percent-encoded for a path. */
function encodedSegment(segment: string): string {
  return [...Buffer.from(segment, 'latin1')]
    .map((byte) => {
      const character = String.fromCharCode(byte);
      return /[A-Za-z0-9._~-]/.test(character) ? character : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

/** The WMS capabilities' query: the version asked for, and WMS-C's tile sets (`TILED=true`). */
function wmsCapabilitiesQuery(query: Map<string, string[]>): URLSearchParams {
  const params = new URLSearchParams({ SERVICE: 'WMS', REQUEST: 'GetCapabilities' });
  const version = single(query, 'VERSION');
  if (version !== undefined && WMS_VERSION.test(version)) params.set('VERSION', version);
  if (single(query, 'TILED')?.toLowerCase() === 'true') params.set('TILED', 'true');
  return params;
}

/**
 * The capabilities document a request to MapProxy's `handler` asks for, in the forms clients ask
 * (TileRequest.capabilities): `/wmts/1.0.0/WMTSCapabilities.xml`, `/tms/1.0.0/`, and at
 * `/service`, `/ows` or `/wms` one GetCapabilities of WMTS or WMS (the default).
 */
function capabilitiesPath(
  app: string,
  handler: string,
  rest: string,
  operation: string,
  query: Map<string, string[]>,
): string | undefined {
  const at = `/${encodedSegment(app)}`;
  if (handler === 'wmts') return rest === '/wmts/1.0.0/WMTSCapabilities.xml' ? `${at}${rest}` : undefined;
  if (handler === 'tms') return rest === '/tms/1.0.0' || rest === '/tms/1.0.0/' ? `${at}/tms/1.0.0/` : undefined;
  if (!KVP_HANDLERS.has(handler) || rest !== `/${handler}`) return undefined;
  if (operation !== 'getcapabilities') return undefined;
  const service = query.has('SERVICE') ? single(query, 'SERVICE')?.toUpperCase() : 'WMS';
  if (service === 'WMTS') return `${at}/${handler}?SERVICE=WMTS&REQUEST=GetCapabilities`;
  return service === 'WMS' ? `${at}/${handler}?${wmsCapabilitiesQuery(query).toString()}` : undefined;
}

/** `uri` (nginx's X-Original-URI) as MapProxy's multiapp and its services route it. */
export function tileRequest(uri: string): TileRequest {
  const path = wsgiPath(uri).replace(/^\/+/, '');
  const slash = path.indexOf('/');
  const app = slash < 0 ? path : path.slice(0, slash);
  const rest = slash < 0 ? '' : path.slice(slash);
  const query = queryOf(uri.split('#', 1)[0] ?? '');
  // MapProxy's handler is the first word of the rest (wsgiapp.py: ^/(\w+)).
  const handler = /^\/(\w+)/.exec(rest)?.[1] ?? '';
  const operation = single(query, 'REQUEST')?.toLowerCase() ?? '';
  // A TMS layer's document shows that layer alone, which is one of the path's segments.
  const namedOnly =
    (KVP_HANDLERS.has(handler) && LAYER_OPERATIONS.has(operation)) ||
    (PATH_HANDLERS.has(handler) && TILE_PATH.test(rest)) ||
    (handler === 'tms' && TMS_CAPABILITIES.exec(rest)?.groups?.['layer'] !== undefined);
  const segments = rest.split('/').filter((segment) => segment !== '');
  const names = new Set([...segments, ...parameterNames(query)].filter((name) => name !== ''));
  const capabilities = namedOnly ? undefined : capabilitiesPath(app, handler, rest, operation, query);
  return {
    app,
    names,
    namedOnly,
    services: servicesOf(handler, rest, query),
    ...(capabilities !== undefined && { capabilities }),
  };
}

/** Why `identity` may not have `layer` of `ref` from the tile cache; undefined when it may read it whole. */
function layerRefusal(identity: Identity, ref: ProjectRef, layer: string): string | undefined {
  const rules = owsLayerRules(identity, ref, layer);
  if (rules === undefined) return undefined;
  if ('read' in rules) return `layer "${layer}" is hidden from this identity`;
  const drawnOnce = "the tile cache's tiles are drawn once, for everyone: ask QGIS Server";
  if (rules.filter !== undefined) return `layer "${layer}" is filtered for this identity, and ${drawnOnce}`;
  if (rules.hidden !== undefined) return `layer "${layer}" has attributes hidden from this identity, and ${drawnOnce}`;
  return undefined;
}

/** A request judged by its project, its services and the layers it names, for an identity with rules. */
interface NamesJudged {
  identity: Identity;
  request: TileRequest;
  /** The stored projects of the request's app, each readable by the identity. */
  refs: ProjectRef[];
}

/**
 * Judges `identity`'s `request` by what it names: the app's project must be readable, the services
 * the request could be served as not refused, and every layer it names readable whole (no feature
 * filter, no hidden attribute); throws the refusal (401 for the anonymous role, as QGIS Server's
 * check), and the root's list of the apps is for administrators. Undefined for an identity that
 * gets everything: administrators, the tile cache token, and anyone without access control.
 */
async function judgedByNames(
  identity: Identity | undefined,
  request: TileRequest,
  cache: CachedProjects | undefined,
): Promise<NamesJudged | undefined> {
  if (identity === undefined || identity.admin || identity.kind === 'tile-cache') return undefined;
  if (request.app === '')
    throw refused(identity, "the list of the tile cache's projects is for administrators", SERVER);
  const refs = (await cache?.projectsOfApp(request.app)) ?? [];
  if (refs.length === 0 || refs.some((ref) => !identity.permissions.may(ref, 'read')))
    throw refused(identity, `"${request.app.slice(0, 80)}" names no project this identity may read`, SERVER);
  const refusedService = request.services.find((service) => !identity.permissions.service(service));
  if (refusedService !== undefined) throw refused(identity, `${refusedService} is refused to this identity`, SERVER);
  for (const ref of refs) {
    for (const name of request.names) {
      const why = layerRefusal(identity, ref, name);
      if (why !== undefined) throw refused(identity, why, SERVER);
    }
  }
  return { identity, request, refs };
}

/** The layers of `ref`'s MapProxy configuration `identity` may read whole, and whether that is all; undefined when unknown. */
async function readableLayers(
  identity: Identity,
  ref: ProjectRef,
  cache: CachedProjects | undefined,
): Promise<{ readable: Set<string>; all: boolean } | undefined> {
  const layers = await cache?.layerNames(ref).catch(() => undefined);
  if (layers === undefined) return undefined;
  const readable = new Set(layers.filter((layer) => layerRefusal(identity, ref, layer) === undefined));
  return { readable, all: readable.size === new Set(layers).size };
}

/**
 * Judges `identity`'s request `uri` to MapProxy (nginx's X-Original-URI); throws the refusal.
 * Beyond what it names (judgedByNames), a request that may show every layer (capabilities, the
 * demo) needs every layer of the project readable whole; a capabilities document refused only so
 * is refused as CapabilitiesToFilter, which nginx asks for again listing the identity's layers.
 */
export async function tilesAuthAnswer(
  identity: Identity | undefined,
  uri: string,
  cache: CachedProjects | undefined,
): Promise<void> {
  const judged = await judgedByNames(identity, tileRequest(uri), cache);
  if (judged === undefined || judged.request.namedOnly) return;
  for (const ref of judged.refs) {
    const layers = await readableLayers(judged.identity, ref, cache);
    if (layers?.all === true) continue;
    if (layers !== undefined && judged.request.capabilities !== undefined) {
      throw new CapabilitiesToFilter(
        `project "${ref.name}" has layers this identity may not read whole: its capabilities list the others only (GET /api/auth/tiles/capabilities)`,
      );
    }
    throw refused(
      judged.identity,
      `project "${ref.name}" has layers this identity may not read whole, so its tile services' capabilities and pages are refused: ask for tiles, maps and legends of its layers`,
      SERVER,
    );
  }
}

/** What the tile cache answers a capabilities request with: MapProxy's document at `path`, listing the layers `listed` takes. */
export interface CapabilitiesListing {
  path: string;
  listed: (layer: string) => boolean;
}

/**
 * The capabilities document `identity` gets for its request `uri` (nginx's X-Original-URI, refused
 * as CapabilitiesToFilter): judged again as tilesAuthAnswer does, then only the layers of the
 * project it may read whole are listed (of every project of the app); throws the refusal, and
 * refuses any request but a capabilities document (TileRequest.capabilities): never a tile.
 */
export async function capabilitiesListing(
  identity: Identity | undefined,
  uri: string,
  cache: CachedProjects | undefined,
): Promise<CapabilitiesListing> {
  const request = tileRequest(uri);
  const judged = await judgedByNames(identity, request, cache);
  const path = request.capabilities;
  if (path === undefined)
    throw new Forbidden("only the tile cache's capabilities documents are listed by layer: ask nginx for the rest");
  if (judged === undefined) return { path, listed: () => true };
  const listings = await Promise.all(judged.refs.map((ref) => readableLayers(judged.identity, ref, cache)));
  const readable = listings.map((listing) => listing?.readable);
  if (readable.includes(undefined))
    throw refused(judged.identity, `the layers of the project of "${request.app.slice(0, 80)}" cannot be read`, SERVER);
  return { path, listed: (layer) => readable.every((layers) => layers?.has(layer) === true) };
}
