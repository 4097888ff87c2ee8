/**
 * Bounds on what a processing run may write, checked before it starts: an output estimated over
 * the operator's limit is refused (422), and one the disk has no room for (507, naming the disk).
 * Estimates are of uncompressed pixels, an upper bound for the compressed outputs too.
 */
import { Unprocessable } from '../errors.js';
import { checkRoomFor, formatBytes } from '../storage/disk-space.js';
import { overviewBytes, overviewFactors } from './overviews.js';

export interface OutputLimits {
  /** Bytes an output may be estimated at (STEWARD_PROCESSING_OUTPUT_LIMIT). */
  maxBytes: number;
  /** Bytes the disk written to keeps free afterwards (STEWARD_MIN_FREE_SPACE). */
  reserve: number;
}

/** No bound: for code that runs processing outside the API (tests, the bench). */
export const UNLIMITED: OutputLimits = { maxBytes: Number.POSITIVE_INFINITY, reserve: 0 };

/** Bytes of a raster with the overviews GDAL would give it (gdaladdo's factors), `pixelBytes` a pixel. */
export function rasterBytes(width: number, height: number, pixelBytes: number, maxFactor?: number): number {
  return (
    width * height * pixelBytes + overviewBytes(width, height, overviewFactors(width, height, maxFactor), pixelBytes)
  );
}

/** Refuses `what`, estimated at `bytes`, when over the limit or when `folder`'s disk lacks the room. */
export async function checkOutput(bytes: number, folder: string, limits: OutputLimits, what: string): Promise<void> {
  if (bytes > limits.maxBytes) {
    throw new Unprocessable(
      `${what} would take about ${formatBytes(bytes)}, over the limit of ${formatBytes(limits.maxBytes)} (STEWARD_PROCESSING_OUTPUT_LIMIT).`,
    );
  }
  await checkRoomFor(folder, bytes, limits.reserve, what);
}
