/** Typed arrays for raster pixels, and reading a band window by window with the next read in flight. */
import type gdal from 'gdal-async';

import { Unprocessable } from '../errors.js';
import type { Window } from './raster-windows.js';

export type PixelArray = Float32Array | Float64Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array;

export type PixelStorage = 'float32' | 'float64' | 'integer';

export interface PixelType {
  storage: PixelStorage;
  create: (length: number) => PixelArray;
  /** Bytes a pixel. */
  bytes: number;
  /** `length` pixels of `buffer` from `byteOffset`: a shared one lets worker threads read and write them too. */
  view: (buffer: ArrayBufferLike, byteOffset: number, length: number) => PixelArray;
}

type PixelArrayConstructor = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): PixelArray;
  BYTES_PER_ELEMENT: number;
} & {
  new (length: number): PixelArray;
};

function pixelArrays(storage: PixelStorage, Pixels: PixelArrayConstructor): PixelType {
  return {
    storage,
    create: (n) => new Pixels(n),
    bytes: Pixels.BYTES_PER_ELEMENT,
    view: (buffer, byteOffset, n) => new Pixels(buffer, byteOffset, n),
  };
}

const TYPES: Record<string, PixelType> = {
  Byte: pixelArrays('integer', Uint8Array),
  Int16: pixelArrays('integer', Int16Array),
  UInt16: pixelArrays('integer', Uint16Array),
  Int32: pixelArrays('integer', Int32Array),
  UInt32: pixelArrays('integer', Uint32Array),
  Float32: pixelArrays('float32', Float32Array),
  Float64: pixelArrays('float64', Float64Array),
  // 64-bit integers are read as doubles, as numpy converts them for a histogram.
  Int64: pixelArrays('float64', Float64Array),
  UInt64: pixelArrays('float64', Float64Array),
};

/** Float32 pixels other threads can see: the calculator's output. */
export const FLOAT32 = TYPES['Float32'] as PixelType;
/** Doubles: the sums and counts of the calculator's overview pyramid. */
export const FLOAT64 = TYPES['Float64'] as PixelType;

/** How pixels of a GDAL data type are held; complex types are refused. */
export function pixelType(dataType: string | null, what: string): PixelType {
  const type = dataType === null ? undefined : TYPES[dataType];
  if (!type)
    throw new Unprocessable(
      `${what} has pixels of type ${dataType ?? 'unknown'}, which raster processing does not handle.`,
    );
  return type;
}

/** Bytes a pixel of a GDAL data type takes uncompressed; for a complex type, an upper bound (complex doubles). */
export function storedBytes(dataType: string | null): number {
  return (dataType === null ? undefined : TYPES[dataType]?.bytes) ?? 16;
}

/** The no-data value as pixels of that storage read it, or NaN when no pixel can equal it. */
export function comparableNoData(noData: number | null, storage: PixelStorage): number {
  if (noData === null) return Number.NaN;
  if (storage === 'float32') return Math.fround(noData);
  if (storage === 'integer' && !Number.isInteger(noData)) return Number.NaN;
  return noData;
}

/** Pixels of the largest of `windows`. */
export function largestWindow(windows: readonly Window[]): number {
  return windows.reduce((most, w) => Math.max(most, w.width * w.height), 0);
}

/**
 * Reads windows of a band into `buffers` in turn (each holds the largest window), handing each to
 * `visit` while the next one is read.
 */
export async function forEachWindow(
  band: gdal.RasterBand,
  windows: readonly Window[],
  buffers: readonly [PixelArray, PixelArray],
  visit: (pixels: PixelArray, window: Window) => void,
): Promise<void> {
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
