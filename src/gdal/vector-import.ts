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

/**
 * ogr2ogr's arguments for the import, the source layer last. One transaction for the whole copy
 * (`-gt unlimited`): a copy that fails or whose process is killed leaves no rows behind.
 */
export function importArguments(options: VectorImport, layer: string): string[] {
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
    ...MODE_ARGUMENTS[options.mode],
    layer,
  ];
}

function sourceLayer(dataset: gdal.Dataset, options: VectorImport): string {
  if (options.layerName !== undefined) return options.layerName;
  const index = options.layerIndex ?? 0;
  if (index >= dataset.layers.count()) throw new Unprocessable(`${options.source} has no layer ${index}`);
  return dataset.layers.get(index).name;
}

/** Copies the layer into the table; `progress` gets the fraction done, from 0 to 1. */
export async function importVector(options: VectorImport, progress?: (fraction: number) => void): Promise<void> {
  const source = await gdal.openAsync(options.source, 'r', options.drivers);
  try {
    const args = importArguments(options, sourceLayer(source, options));
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
