/** Typed arrays for raster pixels, and reading a band window by window with the next read in flight. */
import type gdal from 'gdal-async';

import { Unprocessable } from '../errors.js';
import type { Window } from './windows.js';

export type PixelArray = Float32Array | Float64Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array;

export type PixelStorage = 'float32' | 'float64' | 'integer';

export interface PixelType {
  storage: PixelStorage;
  create: (length: number) => PixelArray;
}

const TYPES: Record<string, PixelType> = {
  Byte: { storage: 'integer', create: (n) => new Uint8Array(n) },
  Int16: { storage: 'integer', create: (n) => new Int16Array(n) },
  UInt16: { storage: 'integer', create: (n) => new Uint16Array(n) },
  Int32: { storage: 'integer', create: (n) => new Int32Array(n) },
  UInt32: { storage: 'integer', create: (n) => new Uint32Array(n) },
  Float32: { storage: 'float32', create: (n) => new Float32Array(n) },
  Float64: { storage: 'float64', create: (n) => new Float64Array(n) },
  // 64-bit integers are read as doubles, as numpy converts them for a histogram.
  Int64: { storage: 'float64', create: (n) => new Float64Array(n) },
  UInt64: { storage: 'float64', create: (n) => new Float64Array(n) },
};

/** How pixels of a GDAL data type are held; complex types are refused. */
export function pixelType(dataType: string | null, what: string): PixelType {
  const type = dataType === null ? undefined : TYPES[dataType];
  if (!type)
    throw new Unprocessable(
      `${what} has pixels of type ${dataType ?? 'unknown'}, which raster processing does not handle.`,
    );
  return type;
}

/** The no-data value as pixels of that storage read it, or NaN when no pixel can equal it. */
export function comparableNoData(noData: number | null, storage: PixelStorage): number {
  if (noData === null) return Number.NaN;
  if (storage === 'float32') return Math.fround(noData);
  if (storage === 'integer' && !Number.isInteger(noData)) return Number.NaN;
  return noData;
}

/** Reads windows of a band, two buffers in turn, handing each to `visit` while the next one is read. */
export async function forEachWindow(
  band: gdal.RasterBand,
  windows: readonly Window[],
  type: PixelType,
  visit: (pixels: PixelArray, window: Window) => void,
): Promise<void> {
  const largest = windows.reduce((most, w) => Math.max(most, w.width * w.height), 0);
  const buffers = [type.create(largest), type.create(largest)];
  const read = (i: number): Promise<PixelArray> | undefined => {
    const w = windows[i];
    return w && band.pixels.readAsync(w.x, w.y, w.width, w.height, buffers[i % 2]);
  };
  let pending = read(0);
  try {
    for (let i = 0; pending; i++) {
      const pixels = await pending;
      pending = read(i + 1);
      visit(pixels, windows[i] as Window);
    }
  } finally {
    // A failed visit leaves the next read in flight; let it settle so nothing rejects unobserved.
    await pending?.catch(() => undefined);
  }
}
