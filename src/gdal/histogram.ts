/**
 * Exact histograms of every band of a raster, read window by window so memory stays flat.
 * Bins follow numpy.histogram (see histogram-bins.ts). Pixels equal to the band's no-data value,
 * and NaN in float bands, are left out. Bands of 8 and 16-bit integers are read once, counting
 * each value; the other types are read twice when the range has to come from the data, first for
 * the exact minimum and maximum, then for the bins. The API computes it in a GDAL worker process
 * (`histogramOffLoop`): counted in the API's own process, it would hold the event loop.
 */
import type gdal from 'gdal-async';

import { runGdalTask } from './gdal-child.js';
import {
  type BandHistogram,
  BinEdges,
  type HistogramOptions,
  resolveRange,
  type ValueRange,
} from './histogram-bins.js';
import { scriptKernels, type WindowKernels, type WindowPass } from './histogram-loops.js';
import { openRaster } from './open-raster.js';
import {
  comparableNoData,
  forEachWindow,
  largestWindow,
  type PixelArray,
  type PixelType,
  pixelType,
} from './pixels.js';
import { planWindows, type Window } from './raster-windows.js';

export const DEFAULT_BIN_COUNT = 1000;
/** Pixels per read: fewer calls than smaller windows, kinder to the caches than larger ones (docs/jobs.md). */
const WINDOW_PIXELS = 1 << 21;

/** Offsets that turn each small integer type's values into indices of a value-count table. */
const VALUE_TABLES: Record<string, { offset: number; size: number }> = {
  Byte: { offset: 0, size: 256 },
  UInt16: { offset: 0, size: 65536 },
  Int16: { offset: 32768, size: 65536 },
};

interface BandSource {
  band: gdal.RasterBand;
  type: PixelType;
  noData: number;
  windows: Window[];
}

function countValues(pixels: PixelArray, n: number, offset: number, table: Float64Array): void {
  for (let i = 0; i < n; i++) {
    const index = (pixels[i] as number) + offset;
    table[index] = (table[index] as number) + 1;
  }
}

async function readPass<Result>(source: BandSource, kernels: WindowKernels, pass: WindowPass<Result>): Promise<Result> {
  await forEachWindow(source.band, source.windows, kernels.buffers, (pixels, w) =>
    pass.add(pixels, w.width * w.height),
  );
  return pass.result();
}

async function binnedHistogram(source: BandSource, options: HistogramOptions, count: number): Promise<BandHistogram> {
  const kernels = scriptKernels(source.type, largestWindow(source.windows));
  const known = options.min !== undefined && options.max !== undefined;
  const valid = known ? null : await readPass(source, kernels, kernels.rangeScan(source.noData));
  const range = resolveRange(options, valid);
  const bins = new BinEdges(range, count, source.type.storage === 'float32');
  return { ...range, values: await readPass(source, kernels, kernels.binning(bins, source.noData)) };
}

/** Smallest and largest value with a non-zero count. */
function presentRange(values: Float64Array, offset: number): ValueRange | null {
  let lowest = 0;
  while (lowest < values.length && values[lowest] === 0) lowest++;
  if (lowest === values.length) return null;
  let highest = values.length - 1;
  while (values[highest] === 0) highest--;
  return { min: lowest - offset, max: highest - offset };
}

async function countedHistogram(
  source: BandSource,
  table: { offset: number; size: number },
  options: HistogramOptions,
  count: number,
): Promise<BandHistogram> {
  const values = new Float64Array(table.size);
  const pixels = largestWindow(source.windows);
  const buffers = [source.type.create(pixels), source.type.create(pixels)] as const;
  await forEachWindow(source.band, source.windows, buffers, (pixels, w) =>
    countValues(pixels, w.width * w.height, table.offset, values),
  );
  if (!Number.isNaN(source.noData)) values[source.noData + table.offset] = 0;
  const range = resolveRange(options, presentRange(values, table.offset));
  const bins = new BinEdges(range, count, false);
  const counts = new Float64Array(count);
  values.forEach((n, i) => {
    const k = n > 0 ? bins.index(i - table.offset) : -1;
    if (k >= 0) counts[k] = (counts[k] as number) + n;
  });
  return { ...range, values: Array.from(counts) };
}

async function bandHistogram(band: gdal.RasterBand, options: HistogramOptions, what: string): Promise<BandHistogram> {
  const type = pixelType(band.dataType, what);
  const source: BandSource = {
    band,
    type,
    noData: comparableNoData(band.noDataValue, type.storage),
    windows: planWindows(band.size.x, band.size.y, band.blockSize, WINDOW_PIXELS),
  };
  const count = options.count ?? DEFAULT_BIN_COUNT;
  const table = VALUE_TABLES[band.dataType ?? ''];
  return table ? countedHistogram(source, table, options, count) : binnedHistogram(source, options, count);
}

/** The histogram of every band, keyed by band number ("1", "2", ...). */
export async function computeHistogram(
  path: string,
  options: HistogramOptions = {},
): Promise<Record<string, BandHistogram>> {
  const dataset = await openRaster(path);
  try {
    const result: Record<string, BandHistogram> = {};
    const count = dataset.bands.count();
    for (let i = 1; i <= count; i++) {
      result[String(i)] = await bandHistogram(dataset.bands.get(i), options, `band ${i} of ${path}`);
    }
    return result;
  } finally {
    dataset.close();
  }
}

/**
 * `computeHistogram` in a GDAL worker process, at the API's own priority: a client waits for it.
 * `signal` stops it (a client that went away).
 */
export async function histogramOffLoop(
  path: string,
  options: HistogramOptions = {},
  signal?: AbortSignal,
): Promise<Record<string, BandHistogram>> {
  const histogram = await runGdalTask({ kind: 'histogram', path, options }, { signal, priority: 'interactive' });
  return histogram as Record<string, BandHistogram>;
}
