/**
 * The calculator's output raster: one Float32 band, tiled (and compressed or not), with a no-data value and
 * empty internal overview levels that the runner fills as it goes.
 */
import gdal from 'gdal-async';

import { Unprocessable } from '../../errors.js';
import { overviewFactors } from '../overviews.js';
import type { OutputFormat } from './format.js';
import type { Grid } from './inputs.js';

/** -FLT_MAX, the no-data value QGIS's raster calculator writes; NaN is read poorly by many tools. */
export const OUTPUT_NO_DATA = -3.4028234663852886e38;
/** Tile size: the runner's windows are rows of whole tiles, 256 rows of 1024 pixels where the raster is that wide. */
export const OUTPUT_BLOCK = 256;
/** Overviews are computed while writing up to this factor; windows are aligned to the largest one. */
export const MAX_OVERVIEW_FACTOR = 512;

const TILING = ['TILED=YES', `BLOCKXSIZE=${OUTPUT_BLOCK}`, `BLOCKYSIZE=${OUTPUT_BLOCK}`, 'BIGTIFF=IF_SAFER'];

// ZSTD at level 1 compresses about as well as DEFLATE here in much less time (docs/jobs.md); NUM_THREADS lets
// GDAL compress tiles on other cores while the next window is computed.
const CREATION_OPTIONS: Record<OutputFormat, string[]> = {
  uncompressed: TILING,
  zstd: [...TILING, 'COMPRESS=ZSTD', 'ZSTD_LEVEL=1', 'NUM_THREADS=ALL_CPUS'],
};

/**
 * Overview tiles of 128 pixels: a row of them covers the 256 rows of a row of full-resolution
 * tiles, so each completes with it, and the partial tiles the runner keeps in GDAL's cache are half
 * as many bytes. (Set for the worker process, which runs this one task.)
 */
const OVERVIEW_BLOCK = '128';

export interface OutputRaster {
  dataset: gdal.Dataset;
  band: gdal.RasterBand;
  /** Overview bands, finest first, and their reduction factors. */
  overviews: gdal.RasterBand[];
  factors: number[];
}

async function create(path: string, grid: Grid, format: OutputFormat): Promise<gdal.Dataset> {
  try {
    const options = CREATION_OPTIONS[format];
    return await gdal.drivers.get('GTiff').createAsync(path, grid.width, grid.height, 1, 'Float32', options);
  } catch (error) {
    throw new Unprocessable(`The output raster cannot be created: ${(error as Error).message}`);
  }
}

export async function createOutputRaster(path: string, grid: Grid, format: OutputFormat): Promise<OutputRaster> {
  const dataset = await create(path, grid, format);
  try {
    dataset.geoTransform = grid.geoTransform;
    if (grid.srs) dataset.srs = grid.srs;
    const band = dataset.bands.get(1);
    band.noDataValue = OUTPUT_NO_DATA;
    const factors = overviewFactors(grid.width, grid.height, MAX_OVERVIEW_FACTOR);
    // "NONE" lays out the overview levels without computing them; the runner writes their pixels.
    gdal.config.set('GDAL_TIFF_OVR_BLOCKSIZE', OVERVIEW_BLOCK);
    if (factors.length > 0) await dataset.buildOverviewsAsync('NONE', factors);
    const overviews = factors.map((_, i) => band.overviews.get(i));
    return { dataset, band, overviews, factors };
  } catch (error) {
    dataset.close();
    throw error;
  }
}
