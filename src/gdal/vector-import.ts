/**
 * A vector layer copied into a PostgreSQL table by GDAL's VectorTranslate (ogr2ogr's library),
 * with a spatial index and an integer primary key. It holds GDAL until done: only the worker
 * process of `gdal-child.ts` calls `importVector`; the API runs it as an `import` task.
 */
import gdal from 'gdal-async';

import { Unprocessable } from '../errors.js';

export type ImportMode = 'create' | 'overwrite' | 'append';

/** The geometry column and the key column every imported table gets. */
export const IMPORT_GEOMETRY_COLUMN = 'geom';
export const IMPORT_KEY_COLUMN = 'id';

export interface VectorImport {
  /** What `gdal.open` takes for the source dataset. */
  source: string;
  /** The source layer by name, else by index (the first when neither). */
  layerName?: string;
  layerIndex?: number;
  /** Drivers to open the source with. */
  drivers?: string[];
  /** The source layer's subset string: only the features it keeps are copied. */
  where?: string;
  /** The `PG:` connection string of the target database. */
  destination: string;
  schema: string;
  table: string;
  /** `EPSG:<code>` to reproject to; the source's CRS when undefined. */
  crs?: string;
  mode: ImportMode;
}

const MODE_ARGUMENTS: Record<ImportMode, string[]> = {
  create: [],
  overwrite: ['-overwrite'],
  append: ['-append'],
};

/** Geometry types whose layers may hold their multi kind too (a Shapefile's polygons, a generic column). */
const PROMOTED_TYPES = new Set([gdal.wkbUnknown, gdal.wkbLineString, gdal.wkbPolygon]);

/**
 * `-nlt PROMOTE_TO_MULTI` for a source whose features may mix single and multi geometries: its
 * table takes the multi type, and every feature fits it. Points stay points.
 */
export function promotion(geometryType: number): string[] {
  // The 2D type: without the 2.5D bit, and ISO's Z, M and ZM kinds (1000, 2000, 3000 + the 2D code).
  const flat = (geometryType & ~gdal.wkb25DBit) % 1000;
  return PROMOTED_TYPES.has(flat) ? ['-nlt', 'PROMOTE_TO_MULTI'] : [];
}

/**
 * ogr2ogr's arguments for the import, the source layer last. One transaction for the whole copy
 * (`-gt unlimited`): a copy that fails or whose process is killed leaves no rows behind.
 */
export function importArguments(options: VectorImport, layer: string, geometryType: number): string[] {
  return [
    '-f',
    'PostgreSQL',
    '-nln',
    `${options.schema}.${options.table}`,
    '-lco',
    `GEOMETRY_NAME=${IMPORT_GEOMETRY_COLUMN}`,
    '-lco',
    `FID=${IMPORT_KEY_COLUMN}`,
    '-lco',
    'SPATIAL_INDEX=GIST',
    '-gt',
    'unlimited',
    ...(options.crs === undefined ? [] : ['-t_srs', options.crs]),
    ...promotion(geometryType),
    ...(options.where === undefined ? [] : ['-where', options.where]),
    ...MODE_ARGUMENTS[options.mode],
    layer,
  ];
}

function sourceLayer(dataset: gdal.Dataset, options: VectorImport): gdal.Layer {
  const key = options.layerName ?? options.layerIndex ?? 0;
  try {
    return dataset.layers.get(key);
  } catch {
    throw new Unprocessable(`${options.source} has no layer ${key}`);
  }
}

/** Copies the layer into the table; `progress` gets the fraction done, from 0 to 1. */
export async function importVector(options: VectorImport, progress?: (fraction: number) => void): Promise<void> {
  const source = await gdal.openAsync(options.source, 'r', options.drivers);
  try {
    const layer = sourceLayer(source, options);
    const args = importArguments(options, layer.name, layer.geomType);
    const written = await gdal.vectorTranslateAsync(
      options.destination,
      source,
      args,
      progress && { progress_cb: (complete: number) => progress(complete) },
    );
    written.close();
  } finally {
    source.close();
  }
}
