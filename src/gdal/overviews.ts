/**
 * Overviews (reduced-resolution copies) so that QGIS Server draws large rasters quickly. GDAL
 * cannot update a file on object storage in place, so for a `/vsis3/` raster the overviews are
 * computed locally, from the remote pixels, into an external `.ovr` file, which is then uploaded
 * beside the raster as `<key>.ovr`, where GDAL looks for it when it opens the raster.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import gdal from 'gdal-async';

import { InsufficientStorage, Unprocessable } from '../errors.js';
import { whenDiskFull } from '../storage/disk-space.js';
import { runGdalTask, type TaskRun } from './gdal-child.js';
import { isObjectStoragePath, uploadGeoTiff } from './object-storage.js';
import { openRaster } from './open-raster.js';
import { storedBytes } from './pixels.js';

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

/** Bytes of the overview levels of a `width` x `height` raster at `factors`, `pixelBytes` a pixel. */
export function overviewBytes(width: number, height: number, factors: readonly number[], pixelBytes: number): number {
  return factors.reduce((sum, factor) => sum + Math.ceil(width / factor) * Math.ceil(height / factor) * pixelBytes, 0);
}

/** Bytes of one pixel of every band, as stored uncompressed. */
function pixelBytes(dataset: gdal.Dataset): number {
  return dataset.bands.map((band) => storedBytes(band.dataType)).reduce((sum, bytes) => sum + bytes, 0);
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

/** Fraction of the work done, from 0 to 1. */
export type OverviewProgress = (fraction: number) => void;

/**
 * Builds external overviews of a raster opened read-only: GDAL writes them to `<file>.ovr`. It
 * holds GDAL until done (GDAL's build cannot be stopped): only the worker process of
 * `gdal-child.ts` calls it.
 */
export async function buildExternalOverviews(
  path: string,
  factors: number[],
  resampling: string,
  progress?: OverviewProgress,
): Promise<void> {
  for (const [key, value] of Object.entries(OVR_SETTINGS)) gdal.config.set(key, value);
  const dataset = await gdal.openAsync(path, 'r');
  try {
    await dataset.buildOverviewsAsync(resampling, factors, undefined, progress && { progress_cb: progress });
  } finally {
    dataset.close();
  }
}

/** The task of `gdal-child.ts` that builds `<path>.ovr`; `share` is the part of the job's progress it takes. */
function buildInChild(path: string, factors: number[], resampling: string, run: TaskRun, share = 1): Promise<unknown> {
  return runGdalTask(
    { kind: 'overviews', path, factors, resampling },
    { ...run, progress: (done, total) => run.progress?.(Math.round(done * share), Math.round(total)) },
  );
}

/** Where the overviews of `datasource` are written: beside a local raster, in a temporary folder for a remote one. */
export function overviewWorkFolder(datasource: string): string {
  return isObjectStoragePath(datasource) ? tmpdir() : dirname(datasource);
}

/** A build's failure: the 507 of the disk of `folder` when it is full, else a 422 with GDAL's reason. */
async function buildFailure(error: unknown, path: string, folder: string): Promise<unknown> {
  const failure = await whenDiskFull(error, folder);
  if (failure instanceof InsufficientStorage) return failure;
  return new Unprocessable(`The overviews of ${path} could not be built: ${(error as Error).message}`);
}

/** Computes the .ovr of a remote raster through a local VRT pointing at it, then uploads it. */
async function buildForObjectStorage(path: string, factors: number[], resampling: string, run: TaskRun): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), 'steward-overviews-'));
  try {
    const vrt = join(folder, 'source.vrt');
    (await gdal.buildVRTAsync(vrt, [path])).close();
    // Building takes nine tenths of the progress, the upload the rest.
    await buildInChild(vrt, factors, resampling, run, 0.9);
    await uploadGeoTiff(`${vrt}.ovr`, `${path}.ovr`, { signal: run.signal });
    run.progress?.(100, 100);
  } catch (error) {
    if (error instanceof Unprocessable || run.signal?.aborted) throw error;
    throw await buildFailure(error, path, folder);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Builds `<file>.ovr` beside a local raster; a build that fails or is stopped leaves no `.ovr`. */
async function buildLocal(path: string, factors: number[], resampling: string, run: TaskRun): Promise<void> {
  try {
    await buildInChild(path, factors, resampling, run);
  } catch (error) {
    const failure = run.signal?.aborted ? error : await buildFailure(error, path, dirname(path));
    await rm(`${path}.ovr`, { force: true });
    throw failure;
  }
}

/** What overview building plans: the factors it will add, none when the raster has some already. */
export interface OverviewPlan {
  existing: number[];
  factors: number[];
  resampling: string;
  /** Bytes of the overviews to write, uncompressed. */
  bytes: number;
}

/** Looks at the raster at `datasource`: the overviews it has, those it would get. */
export async function planOverviews(datasource: string): Promise<OverviewPlan> {
  const dataset = await openRaster(datasource);
  try {
    const existing = existingFactors(dataset);
    const { x: width, y: height } = dataset.rasterSize;
    const factors = existing.length > 0 ? [] : overviewFactors(width, height);
    const bytes = overviewBytes(width, height, factors, pixelBytes(dataset));
    return { existing, factors, resampling: resamplingFor(dataset.bands.get(1)), bytes };
  } finally {
    dataset.close();
  }
}

/**
 * Gives the raster at `datasource` overviews unless it already has some, and returns the factors
 * it has afterwards. Local files get an external `<file>.ovr` as well; the file itself is not
 * modified. The build runs in a worker process, which `run.signal` stops; nothing is left of a
 * build that did not finish. Progress is in percent.
 */
export async function buildOverviews(datasource: string, run: TaskRun = {}, plan?: OverviewPlan): Promise<number[]> {
  const { existing, factors, resampling } = plan ?? (await planOverviews(datasource));
  if (existing.length > 0) return existing;
  if (factors.length === 0) return [];
  if (isObjectStoragePath(datasource)) await buildForObjectStorage(datasource, factors, resampling, run);
  else await buildLocal(datasource, factors, resampling, run);
  return factors;
}
