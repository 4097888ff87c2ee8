import { type Readable } from 'node:stream';

import { BadGateway, NotFound } from '../errors.js';
import { CrsResolver } from '../gdal/crs.js';
import { type Extent } from '../qgis/layer.js';
import { type PublishedLayer } from '../qgis/project.js';
import { projectKey, type ProjectRef, type ProjectStore } from '../storage/project-store.js';
import {
  type PreparedGet,
  type QgisAnswer,
  type QgisBody,
  type QgisClient,
  type QgisParams,
} from '../transport/qgis-get.js';
import { type LayerService } from './layers.js';
import { type ProjectRepository } from './repository.js';

export const MAP_SIZE = 400;
/** The body of a request of Steward's plugin: a form of base64url documents (askSteward). */
const FORM_TYPE = 'application/x-www-form-urlencoded';
/** GetMap URLs kept at most; past it the cache starts afresh (deleted projects' URLs go with it). */
const MAX_CACHED_URLS = 10_000;

export interface RenderedMap {
  /** The response headers worth passing on: `content-type`, and `content-length` when QGIS Server sent it. */
  headers: Record<string, string>;
  /** The image, whole when QGIS Server's answer came in one piece, else as it streams in. */
  body: Buffer | Readable;
}

/**
 * The square a layer's map covers: its extent widened on its shorter side, about its centre, so
 * that the square image keeps the layer's shape (QGIS Desktop's map canvas does the same when its
 * extent is set to a layer's). An extent without area on either side is left as it is.
 */
export function squareAround([xmin, ymin, xmax, ymax]: Extent): Extent {
  const width = xmax - xmin;
  const height = ymax - ymin;
  if (!(width > 0 && height > 0) || width === height) return [xmin, ymin, xmax, ymax];
  const half = Math.max(width, height) / 2;
  const [cx, cy] = [(xmin + xmax) / 2, (ymin + ymax) / 2];
  return width > height ? [xmin, cy - half, xmax, cy + half] : [cx - half, ymin, cx + half, ymax];
}

/**
 * What a layer's map covers: its extent, else (a layer QGIS saved without one whose datasource
 * tells none, as an in-memory layer of QGIS 3.40, whose features are not saved) its CRS's area of use.
 */
function drawnExtent(layer: PublishedLayer): Extent {
  if (layer.extent.every(Number.isFinite)) return layer.extent;
  return CrsResolver.areaOfUse(layer.authid) ?? layer.extent;
}

/** WMS 1.3.0 BBOX: latitude/northing first for CRSs whose EPSG axis order says so. */
function wmsBbox(extent: Extent, authid: string): string {
  const [xmin, ymin, xmax, ymax] = extent;
  const box = CrsResolver.northingFirst(authid) ? [ymin, xmin, ymax, xmax] : [xmin, ymin, xmax, ymax];
  return box.join(',');
}

interface CachedUrl {
  /** The stored project's identity when the URL was built. */
  identity: string;
  url: string;
  /** The GetMap's request, made once: a map asked for again sends its bytes as they are. */
  request: PreparedGet;
}

/** GetMap requests for a layer, sent to the QGIS Server that publishes the project. */
/** A project's QGIS Server URL: `<server>?MAP=<project>`. */
export async function qgisProjectUrl(qgisServerUrl: string, store: ProjectStore, ref: ProjectRef): Promise<URL> {
  const url = new URL(qgisServerUrl);
  url.searchParams.set('MAP', await store.mapParameter(ref));
  return url;
}

export class MapService {
  /** Built GetMap URLs by project and layer, each with the identity of the project it was built from. */
  private readonly urls = new Map<string, CachedUrl>();

  constructor(
    private readonly qgisServerUrl: string,
    private readonly repository: ProjectRepository,
    private readonly layers: LayerService,
    private readonly qgis: QgisClient,
  ) {}

  /** The store of the projects drawn: what a MAP value names. */
  get store(): ProjectStore {
    return this.repository.store;
  }

  /** The MAP value of a project, as QGIS Server is asked for it. */
  mapParameter(ref: ProjectRef): Promise<string> {
    return this.repository.store.mapParameter(ref);
  }

  projectUrl(ref: ProjectRef): Promise<URL> {
    return qgisProjectUrl(this.qgisServerUrl, this.repository.store, ref);
  }

  getMapUrl(projectUrl: URL, layer: PublishedLayer): string {
    const url = new URL(projectUrl);
    const parameters: Record<string, string> = {
      SERVICE: 'WMS',
      VERSION: '1.3.0',
      REQUEST: 'GetMap',
      LAYERS: layer.wmsName,
      STYLES: '',
      CRS: layer.authid,
      BBOX: wmsBbox(squareAround(drawnExtent(layer)), layer.authid),
      WIDTH: String(MAP_SIZE),
      HEIGHT: String(MAP_SIZE),
      FORMAT: 'image/png',
      TRANSPARENT: 'TRUE',
    };
    for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
    return url.toString();
  }

  async url(ref: ProjectRef, name: string): Promise<string> {
    const key = urlKey(ref, name);
    const identity = await this.repository.store.identity(ref);
    const cached = this.urls.get(key);
    if (cached && cached.identity === identity) return cached.url;
    const url = this.getMapUrl(await this.projectUrl(ref), await this.layers.published(ref, name));
    if (identity === undefined) return url;
    if (this.urls.size >= MAX_CACHED_URLS) this.urls.clear();
    this.urls.set(key, { identity, url, request: this.qgis.prepare(url) });
    return url;
  }

  /**
   * Draws a view of several of a project's layers, as an interactive map client asks for one: each
   * layer must exist (404 otherwise), and QGIS Server reprojects them into the view's CRS.
   */
  async view(ref: ProjectRef, view: MapView, params: QgisParams = []): Promise<RenderedMap> {
    const url = await this.viewUrl(ref, view, { REQUEST: 'GetMap', FORMAT: 'image/png', TRANSPARENT: 'TRUE' });
    return mapOf(await this.ask(url, params), view.layers.join(', '));
  }

  /**
   * The WMS 1.3.0 request of a view with `extra` parameters (its GetMap, or a GetFeatureInfo at one
   * of its pixels): each layer must exist (404 otherwise), and QGIS Server reprojects them into the view's CRS.
   */
  async viewUrl(ref: ProjectRef, view: MapView, extra: Record<string, string>): Promise<string> {
    const entries = await this.viewLayers(ref, view);
    const url = await this.projectUrl(ref);
    const parameters: Record<string, string> = {
      SERVICE: 'WMS',
      VERSION: '1.3.0',
      LAYERS: entries.map((entry) => entry.wmsName).join(','),
      STYLES: view.styles.join(','),
      CRS: view.crs,
      BBOX: wmsBbox(view.bbox, view.crs),
      WIDTH: String(view.width),
      HEIGHT: String(view.height),
      ...extra,
    };
    for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
    return url.toString();
  }

  /** The layers of a view, each of which must exist with the style the view names (404 otherwise). */
  async viewLayers(ref: ProjectRef, view: MapView): Promise<PublishedLayer[]> {
    const entries = await Promise.all(view.layers.map((name) => this.layers.published(ref, name)));
    entries.forEach((entry, index) => requireStyle(entry, view.styles[index] ?? ''));
    return entries;
  }

  /**
   * Sends a request of the STEWARD service of Steward's plugin in QGIS Server: a POST whose
   * `documents` go as a form, each in base64url. QGIS Server reads a POST body that is XML as
   * parameters (its root's name as REQUEST, each of its attributes as one, MAP included) and any
   * other as a query string: base64url holds no `&` or `=`, so no document can name another
   * project or layer. `params` (the identity's rules) go with it as for a map.
   */
  async askSteward(
    ref: ProjectRef,
    parameters: Record<string, string>,
    documents: Record<string, string>,
    params: QgisParams = [],
  ): Promise<QgisAnswer> {
    const url = await this.projectUrl(ref);
    for (const [name, value] of Object.entries({ SERVICE: 'STEWARD', ...parameters }))
      url.searchParams.set(name, value);
    const form = Object.entries(documents)
      .map(([name, document]) => `${name}=${Buffer.from(document, 'utf8').toString('base64url')}`)
      .join('&');
    return this.ask(url.toString(), params, { type: FORM_TYPE, bytes: Buffer.from(form, 'latin1') });
  }

  close(): void {
    this.qgis.close();
  }

  /**
   * Sends a GET of `url` to QGIS Server (a POST of `body` when given), with `params` (the
   * identity's rules) when it is reached over FastCGI.
   */
  ask(url: string, params: QgisParams = [], body?: QgisBody): Promise<QgisAnswer> {
    return this.qgis.prepare(url, params, body)();
  }

  /**
   * Streams the PNG QGIS Server draws for layer `name`; a QGIS Server error becomes a 502 carrying
   * its message. A layer drawn before, in a project this process has not changed since, is asked
   * for at once with the URL built then, and the stored project is checked once the request is
   * written, while QGIS Server draws (the check is a tenth of a millisecond of the map's latency
   * otherwise): when another process changed it, that answer is discarded and QGIS Server asked again.
   */
  async render(ref: ProjectRef, name: string, params: QgisParams = []): Promise<RenderedMap> {
    // A map drawn under an identity's rules is asked for as it is; the prepared requests are everyone's.
    if (params.length > 0) return mapOf(await this.ask(await this.url(ref, name), params), name);
    const cached = this.urls.get(urlKey(ref, name));
    if (cached && cached.identity === this.repository.lastSeenIdentity(ref)) {
      if (this.layers.confining) await this.layers.confineByName(ref, name);
      const answer = await this.askAgain(ref, cached);
      if (answer) return mapOf(answer, name);
    }
    return mapOf(await this.ask(await this.url(ref, name)), name);
  }

  /** QGIS Server's answer to a cached request, or undefined when the project changed meanwhile. */
  private async askAgain(ref: ProjectRef, cached: CachedUrl): Promise<QgisAnswer | undefined> {
    let check: Promise<boolean> | undefined;
    const builtFromCurrent = (): Promise<boolean> => (check ??= this.isCurrent(ref, cached.identity));
    let answer: QgisAnswer;
    try {
      answer = await cached.request(() => void builtFromCurrent());
    } catch (error) {
      if (await builtFromCurrent()) throw error;
      return undefined;
    }
    if (await builtFromCurrent()) return answer;
    if (!Buffer.isBuffer(answer.body)) answer.body.destroy();
    return undefined;
  }

  /** Whether the stored project is still the one of `identity`. */
  private isCurrent(ref: ProjectRef, identity: string): Promise<boolean> {
    return this.repository.store.identity(ref).then(
      (current) => current === identity,
      () => false,
    );
  }
}

/** A view of several layers of a project, as a map client asks for it. */
export interface MapView {
  layers: string[];
  /** The style of each layer, '' for its current one; empty for the current styles of all. */
  styles: string[];
  /** minx, miny, maxx, maxy in `crs`, east first. */
  bbox: [number, number, number, number];
  crs: string;
  width: number;
  height: number;
}

/** A style a view names for a layer must be one of the layer's: QGIS Server answers an error for any other. */
function requireStyle(layer: PublishedLayer, style: string): void {
  if (style !== '' && !layer.styles.includes(style))
    throw new NotFound(`layer "${layer.name}" has no style "${style}"; its styles are ${layer.styles.join(', ')}`, {
      code: 'style_not_found',
    });
}

function urlKey(ref: ProjectRef, layer: string): string {
  return `${projectKey(ref)}\u0000${layer}`;
}

/**
 * QGIS Server's answer as a map, or a 502 with what it said instead. A map is returned as it is,
 * not in a promise: each promise a small map's answer goes through costs a microtask turn.
 */
export function mapOf(answer: QgisAnswer, name: string): RenderedMap | Promise<never> {
  const contentType = answer.headers.get('content-type') ?? '';
  if (answer.status !== 200 || !contentType.startsWith('image/')) return refused(answer, name);
  const length = answer.headers.get('content-length');
  return {
    headers: { 'content-type': contentType, ...(length === undefined ? {} : { 'content-length': length }) },
    body: answer.body,
  };
}

/** The 502 for an answer of QGIS Server that is not a map, with what it said. */
async function refused(answer: QgisAnswer, name: string): Promise<never> {
  const detail = (await text(answer.body)).replace(/\s+/g, ' ').slice(0, 500);
  const failed = `QGIS Server could not draw layer "${name}" (HTTP ${answer.status})`;
  throw new BadGateway(`${failed}: ${detail}`, { clientMessage: `${failed}: its answer is in Steward's log` });
}

/** A body's bytes as UTF-8 text. */
async function text(body: Buffer | Readable): Promise<string> {
  return (await bytes(body)).toString('utf8');
}

/** All of a body's bytes, whether it came whole or as a stream. */
export async function bytes(body: Buffer | Readable): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
