import { type Extent } from '../qgis/layer.js';
import { type TimeDimension } from '../qgis/temporal.js';
import { type TileStore } from './tile-store.js';
import { type YamlMapping } from './yaml.js';

export const TILE_GRID = 'GLOBAL_WEBMERCATOR';

/** What the cache needs of a layer; every `PublishedLayer` is one. */
export interface CacheLayer {
  name: string;
  /** The name QGIS Server publishes the layer under, which its WMS source asks for. */
  wmsName: string;
  authid: string;
  extent: Extent;
  time?: TimeDimension;
}

export interface ProjectCache {
  title: string;
  /** The project's QGIS Server URL, with `MAP=`. */
  projectUrl: URL;
  layers: readonly CacheLayer[];
  tiles: TileStore;
  app: string;
  /** MapProxy's `globals.cache.base_dir` for this project (legends, locks). */
  mapproxyDir: string;
  /** Sent with every request to QGIS Server: the tile cache's token, when nginx checks tokens. */
  sourceHeaders?: Readonly<Record<string, string>>;
}

/**
 * A layer's WMS source, without a coverage: MapProxy asks a source with one only for the part of a
 * tile inside it, which for a layer under a pixel and a half at the low levels is a 1 x 1 GetMap,
 * and QGIS Server refuses WIDTH=1 with HEIGHT=1 (400); such tiles could neither be served nor seeded.
 */
function source(layer: CacheLayer, project: ProjectCache, withTime: boolean): YamlMapping {
  return {
    type: 'wms',
    req: { url: project.projectUrl.toString(), layers: layer.wmsName, transparent: true },
    wms_opts: { version: '1.3.0', legendgraphic: true },
    ...(withTime ? { forward_req_params: ['time'] } : {}),
    ...(project.sourceHeaders ? { http: { headers: { ...project.sourceHeaders } } } : {}),
  };
}

function timeDimension(time: TimeDimension): YamlMapping {
  return { time: { values: time.values, ...(time.default === undefined ? {} : { default: time.default }) } };
}

/** A layer with the name MapProxy's sources and caches know it by. */
export interface NamedLayer {
  layer: CacheLayer;
  /** Letters, digits and `_.-` only: MapProxy reads `:` and `,` in source references as layer selections. */
  id: string;
}

/**
 * The layers MapProxy serves: a layer name repeated in a project made with QGIS is served once (the
 * first), and internal names made alike from different layer names get a number.
 */
export function namedLayers(layers: readonly CacheLayer[]): NamedLayer[] {
  const names = new Set<string>();
  const ids = new Set<string>();
  const named: NamedLayer[] = [];
  for (const layer of layers) {
    if (names.has(layer.name)) continue;
    names.add(layer.name);
    const base = layer.name.replace(/[^A-Za-z0-9_.-]/g, '_');
    let id = base;
    for (let suffix = 2; ids.has(id); suffix += 1) id = `${base}_${suffix}`;
    ids.add(id);
    named.push({ layer, id });
  }
  return named;
}

/** The name of the layer's cache in the configuration. */
export function cacheName(id: string): string {
  return `${id}_cache`;
}

function cache({ layer, id }: NamedLayer, project: ProjectCache): YamlMapping {
  return {
    grids: [TILE_GRID],
    sources: [`${id}_wms`],
    format: 'image/png',
    cache: project.tiles.cacheOptions(project.app, layer.name),
  };
}

/** A layer titled by its name: TMS's list names its layers by title alone (capabilities.ts reads it so). */
function mapproxyLayer({ layer, id }: NamedLayer, time: TimeDimension | undefined): YamlMapping {
  const entry = { name: layer.name, title: layer.name, sources: [cacheName(id)] };
  return time === undefined ? entry : { ...entry, dimensions: timeDimension(time) };
}

/** RESTful WMTS tile URLs with the time dimension, as `/wmts/<layer>/<grid>/<time>/<z>/<x>/<y>.png`. */
const TIME_TILE_TEMPLATE = '/{Layer}/{TileMatrixSet}/{Time}/{TileMatrix}/{TileCol}/{TileRow}.{Format}';

/**
 * MapProxy 1.15 reads the dimension of a RESTful WMTS request only from its URL template, one for
 * all layers (a layer without time takes `default` there), and without it in the template cannot
 * render the RESTful capabilities of a layer with dimensions. KVP GetTile takes `TIME=` as it is;
 * MapProxy 1.15's KVP capabilities fail on dimensions whatever the configuration.
 */
function wmtsService(withTime: boolean): YamlMapping {
  return withTime ? { restful_template: TIME_TILE_TEMPLATE } : {};
}

/**
 * The MapProxy configuration of a project: for each layer a WMS source on QGIS Server, a cache on
 * the web mercator grid and a layer served by WMTS, TMS and WMS. MapProxy refuses a WMS service
 * without layers, so an empty project offers only the tile services.
 */
export function mapproxyConfig(project: ProjectCache): YamlMapping {
  const layers = namedLayers(project.layers);
  const time = ({ layer }: NamedLayer): TimeDimension | undefined =>
    project.tiles.supportsDimensions ? layer.time : undefined;
  const base = project.mapproxyDir;
  return {
    globals: {
      cache: {
        base_dir: base,
        lock_dir: `${base}/locks`,
        tile_lock_dir: `${base}/tile_locks`,
        ...project.tiles.globalCacheOptions(),
      },
      // Full-colour PNGs as QGIS draws them: MapProxy's default 256-colour palette bands antialiasing.
      image: { paletted: false },
    },
    services: {
      demo: null,
      tms: { use_grid_names: true, origin: 'nw' },
      wmts: wmtsService(layers.some((named) => time(named) !== undefined)),
      ...(layers.length > 0 ? { wms: { md: { title: project.title } } } : {}),
    },
    sources: Object.fromEntries(
      layers.map((named) => [`${named.id}_wms`, source(named.layer, project, time(named) !== undefined)]),
    ),
    caches: Object.fromEntries(layers.map((named) => [cacheName(named.id), cache(named, project)])),
    ...(layers.length > 0 ? { layers: layers.map((named) => mapproxyLayer(named, time(named))) } : {}),
  };
}
