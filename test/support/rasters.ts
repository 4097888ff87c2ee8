/** Test rasters made with GDAL: any pixel type, no-data, tiling, grid and CRS. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import gdal from 'gdal-async';

export type TestPixelType = 'Byte' | 'Int16' | 'UInt16' | 'Int32' | 'Float32' | 'Float64';

export interface RasterSpec {
  type: TestPixelType;
  width: number;
  height: number;
  bands?: number;
  noData?: number;
  /** Pixel value at (x, y) of band `band` (1-based). */
  value: (x: number, y: number, band: number) => number;
  geoTransform?: number[];
  epsg?: number;
  /** Tile size; striped (GDAL's default layout) when absent. */
  tile?: number;
}

/** A deterministic pseudo-random generator (mulberry32), so every run tests the same pixels. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function writeRaster(path: string, spec: RasterSpec): string {
  const bands = spec.bands ?? 1;
  const options = spec.tile ? ['TILED=YES', `BLOCKXSIZE=${spec.tile}`, `BLOCKYSIZE=${spec.tile}`] : [];
  const dataset = gdal.drivers.get('GTiff').create(path, spec.width, spec.height, bands, spec.type, options);
  dataset.geoTransform = spec.geoTransform ?? [500000, 10, 0, 4000000, 0, -10];
  dataset.srs = gdal.SpatialReference.fromEPSG(spec.epsg ?? 32631);
  const Array = gdal.fromDataType(spec.type);
  for (let b = 1; b <= bands; b++) {
    const band = dataset.bands.get(b);
    if (spec.noData !== undefined) band.noDataValue = spec.noData;
    const pixels = new Array(spec.width * spec.height);
    for (let y = 0; y < spec.height; y++) {
      for (let x = 0; x < spec.width; x++) pixels[y * spec.width + x] = spec.value(x, y, b);
    }
    band.pixels.write(0, 0, spec.width, spec.height, pixels);
  }
  dataset.close();
  return path;
}

/** A fresh temporary folder and a function that removes it. */
export async function scratchFolder(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
