import { type CacheLayer, cacheName, type NamedLayer, TILE_GRID } from './mapproxy-config.js';
import { type YamlMapping } from './yaml.js';

/** The layer's extent as a seed coverage, when it is a real box in a CRS MapProxy can name. */
function coverage(layer: CacheLayer): YamlMapping | undefined {
  const [xmin, ymin, xmax, ymax] = layer.extent;
  const isBox = layer.extent.every(Number.isFinite) && xmax > xmin && ymax > ymin;
  if (!isBox || !/^[A-Z]+:\d+$/i.test(layer.authid)) return undefined;
  return { bbox: [xmin, ymin, xmax, ymax], srs: layer.authid };
}

/** Levels of MapProxy's GLOBAL_WEBMERCATOR grid: 0 to 19. */
export const MAX_ZOOM = 19;

export type SeedKind = 'seed' | 'truncate';

/** Which tiles a seed or a truncation covers. */
export interface CacheSelection {
  /** Layer names; all of the project's layers when missing. */
  layers?: string[];
  minZoom: number;
  maxZoom: number;
  /** `[xmin, ymin, xmax, ymax]` in `extentCrs`; each layer's own extent when missing. */
  extent?: [number, number, number, number];
  extentCrs?: string;
  /** Seeding: whether tiles already cached are drawn again. */
  refresh?: boolean;
}

export const DEFAULT_EXTENT_CRS = 'EPSG:4326';

/** A selection as the API takes it and a seed job keeps it in its `params`. */
export interface SelectionParams {
  layers?: string[];
  min_zoom: number;
  max_zoom: number;
  extent?: [number, number, number, number];
  extent_crs?: string;
  refresh?: boolean;
}

export function selectionOf(params: SelectionParams): CacheSelection {
  return {
    ...(params.layers && { layers: params.layers }),
    minZoom: params.min_zoom,
    maxZoom: params.max_zoom,
    ...(params.extent && { extent: params.extent }),
    ...(params.extent_crs !== undefined && { extentCrs: params.extent_crs }),
    ...(params.refresh !== undefined && { refresh: params.refresh }),
  };
}

/** Where a task works: the asked extent, or the layer's extent. */
function taskCoverage(selection: CacheSelection, named: NamedLayer): YamlMapping | undefined {
  if (selection.extent) return { bbox: selection.extent, srs: selection.extentCrs ?? DEFAULT_EXTENT_CRS };
  return coverage(named.layer);
}

/**
 * The `mapproxy-seed` configuration of a seed or truncation: one task per layer (`seeds:` or
 * `cleanups:`), each on the layer's cache, the selected levels and its coverage. A refresh redraws
 * tiles made before now; a truncation removes the tiles made before now, that is all of them.
 */
export function seedConfig(kind: SeedKind, selection: CacheSelection, layers: readonly NamedLayer[]): YamlMapping {
  const coverages: Record<string, YamlMapping> = {};
  const tasks: Record<string, YamlMapping> = {};
  layers.forEach((named, index) => {
    const area = taskCoverage(selection, named);
    if (area) coverages[`area_${index}`] = area;
    tasks[`layer_${index}`] = {
      caches: [cacheName(named.id)],
      grids: [TILE_GRID],
      levels: { from: selection.minZoom, to: selection.maxZoom },
      ...(area && { coverages: [`area_${index}`] }),
      ...(kind === 'seed' && selection.refresh === true && { refresh_before: { seconds: 0 } }),
    };
  });
  return { coverages, [kind === 'seed' ? 'seeds' : 'cleanups']: tasks };
}
