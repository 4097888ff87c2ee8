/**
 * Overviews (reduced-resolution copies) so that QGIS Server draws large rasters quickly. GDAL
 * cannot update a file on object storage in place, so for a `/vsis3/` raster the overviews are
 * computed locally, from the remote pixels, into an external `.ovr` file, which is then uploaded
 * beside the raster as `<key>.ovr`, where GDAL looks for it when it opens the raster.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { Unprocessable } from '../errors.js';
import { isObjectStoragePath, uploadGeoTiff } from './object-storage.js';
import { openRaster } from './open-raster.js';

/** Overview levels stop once the coarsest fits in one block of this size, as gdaladdo does. */
const MIN_OVERVIEW_SIZE = 256;

/** External .ovr files: compressed, BigTIFF when needed, in 512-pixel blocks. */
const OVR_SETTINGS: Record<string, string> = {
  COMPRESS_OVERVIEW: 'ZSTD',
  ZSTD_LEVEL_OVERVIEW: '1',
  BIGTIFF_OVERVIEW: 'IF_SAFER',
  GDAL_TIFF_OVR_BLOCKSIZE: '512',
};

/** Factors 2, 4, 8... until the coarsest overview fits within 256 x 256 pixels (gdaladdo's default). */
export function overviewFactors(width: number, height: number, maxFactor = Number.POSITIVE_INFINITY): number[] {
  const factors: number[] = [];
  for (let factor = 1; Math.max(Math.ceil(width / factor), Math.ceil(height / factor)) > MIN_OVERVIEW_SIZE;) {
    factor *= 2;
    if (factor > maxFactor) break;
    factors.push(factor);
  }
  return factors;
}

/** Paletted and categorical rasters keep real values (nearest); the others are averaged. */
function resamplingFor(band: gdal.RasterBand): string {
  return band.colorTable ? 'NEAREST' : 'AVERAGE';
}

function existingFactors(dataset: gdal.Dataset): number[] {
  const band = dataset.bands.get(1);
  const width = dataset.rasterSize.x;
  return band.overviews.map((overview) => Math.round(width / overview.size.x));
}

/** Builds external overviews of a raster opened read-only: GDAL writes them to `<file>.ovr`. */
async function buildExternal(path: string, factors: number[], resampling: string): Promise<void> {
  for (const [key, value] of Object.entries(OVR_SETTINGS)) gdal.config.set(key, value);
  const dataset = await gdal.openAsync(path, 'r');
  try {
    await dataset.buildOverviewsAsync(resampling, factors);
  } finally {
    dataset.close();
  }
}

/** Computes the .ovr of a remote raster through a local VRT pointing at it, then uploads it. */
async function buildForObjectStorage(path: string, factors: number[], resampling: string): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), 'steward-overviews-'));
  try {
    const vrt = join(folder, 'source.vrt');
    (await gdal.buildVRTAsync(vrt, [path])).close();
    await buildExternal(vrt, factors, resampling);
    uploadGeoTiff(`${vrt}.ovr`, `${path}.ovr`);
  } catch (error) {
    if (error instanceof Unprocessable) throw error;
    throw new Unprocessable(`The overviews of ${path} could not be built: ${(error as Error).message}`);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * Gives the raster at `datasource` overviews unless it already has some, and returns the factors
 * it has afterwards. Local files get an external `<file>.ovr` as well; the file itself is not
 * modified.
 */
export async function buildOverviews(datasource: string): Promise<number[]> {
  const dataset = await openRaster(datasource);
  const existing = existingFactors(dataset);
  const { x: width, y: height } = dataset.rasterSize;
  const resampling = resamplingFor(dataset.bands.get(1));
  dataset.close();
  if (existing.length > 0) return existing;
  const factors = overviewFactors(width, height);
  if (factors.length === 0) return [];
  if (isObjectStoragePath(datasource)) await buildForObjectStorage(datasource, factors, resampling);
  else
    await buildExternal(datasource, factors, resampling).catch((error: Error) => {
      throw new Unprocessable(`The overviews of ${datasource} could not be built: ${error.message}`);
    });
  return factors;
}
