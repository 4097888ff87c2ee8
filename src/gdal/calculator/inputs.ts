/**
 * Opens the rasters an expression refers to and puts every referenced band on one grid: the grid
 * of the first band the expression names. A raster already on that grid is read as it is; any
 * other is read through a warped VRT (nearest neighbour, as the QGIS raster calculator does),
 * which GDAL evaluates window by window, so no input is ever held whole in memory.
 */
import { randomUUID } from 'node:crypto';

import gdal from 'gdal-async';

import { BadRequest, Unprocessable } from '../../errors.js';
import { openRaster } from '../open-raster.js';
import { type PixelType, pixelType } from '../pixels.js';
import { type BandReference, referenceKey } from './ast.js';
import { minusHint } from './lexer.js';

export interface Grid {
  width: number;
  height: number;
  geoTransform: number[];
  srs: gdal.SpatialReference | null;
}

export interface InputBand {
  key: string;
  band: gdal.RasterBand;
  type: PixelType;
  noData: number | null;
}

export interface OpenedInputs {
  grid: Grid;
  /** One entry per distinct `layer@band`, in order of first appearance. */
  bands: InputBand[];
  close(): void;
}

export interface Reference {
  ref: BandReference;
  position: number;
}

function gridOf(dataset: gdal.Dataset): Grid {
  const { x: width, y: height } = dataset.rasterSize;
  return { width, height, geoTransform: dataset.geoTransform ?? [0, 1, 0, 0, 0, 1], srs: dataset.srs };
}

function sameSrs(a: gdal.SpatialReference | null, b: gdal.SpatialReference | null): boolean {
  if (a === null || b === null) return a === b;
  return a.isSame(b);
}

/** Same size, same CRS, and the same transform to a hundredth of a pixel over the whole raster. */
export function sameGrid(a: Grid, b: Grid): boolean {
  if (a.width !== b.width || a.height !== b.height || !sameSrs(a.srs, b.srs)) return false;
  const pixel = Math.min(Math.abs(a.geoTransform[1] ?? 1), Math.abs(a.geoTransform[5] ?? 1));
  const extent = Math.max(a.width, a.height);
  return a.geoTransform.every((value, i) => {
    const tolerance = i === 0 || i === 3 ? pixel / 100 : pixel / 100 / extent;
    return Math.abs(value - (b.geoTransform[i] ?? Number.NaN)) <= tolerance;
  });
}

function warpArguments(grid: Grid): string[] {
  const [x0, sizeX, rotX, y0, rotY, sizeY] = grid.geoTransform as [number, number, number, number, number, number];
  if (rotX !== 0 || rotY !== 0)
    throw new Unprocessable(
      'the first raster of the expression is rotated; rasters on other grids cannot be resampled onto it.',
    );
  const [minY, maxY] = [y0 + sizeY * grid.height, y0].sort((p, q) => p - q) as [number, number];
  const extent = [x0, minY, x0 + sizeX * grid.width, maxY].map(String);
  const target = grid.srs ? ['-t_srs', grid.srs.toWKT()] : [];
  // -et 0: exact coordinate transformation, so each pixel's source does not depend on how the
  // raster is cut into windows.
  return [
    '-of',
    'VRT',
    ...target,
    '-te',
    ...extent,
    '-ts',
    String(grid.width),
    String(grid.height),
    '-r',
    'near',
    '-et',
    '0',
    '-ot',
    'Float64',
    '-dstnodata',
    'nan',
  ];
}

class InputSet implements OpenedInputs {
  readonly bands: InputBand[] = [];
  private readonly datasets: gdal.Dataset[] = [];
  private readonly memoryFiles: string[] = [];
  grid: Grid = { width: 0, height: 0, geoTransform: [], srs: null };

  async open(path: string, layer: string): Promise<gdal.Dataset> {
    const dataset = await openRaster(path, `the raster of layer "${layer}" (${path})`);
    this.datasets.push(dataset);
    if (this.datasets.length === 1) this.grid = gridOf(dataset);
    return sameGrid(this.grid, gridOf(dataset)) ? dataset : this.resampled(dataset);
  }

  private async resampled(dataset: gdal.Dataset): Promise<gdal.Dataset> {
    const path = `/vsimem/steward-calc-${randomUUID()}.vrt`;
    this.memoryFiles.push(path);
    const warped = await gdal.warpAsync(path, null, [dataset], warpArguments(this.grid));
    this.datasets.push(warped);
    return warped;
  }

  addBand(dataset: gdal.Dataset, { ref, position }: Reference): void {
    const count = dataset.bands.count();
    if (ref.band > count) {
      throw new BadRequest(
        `Invalid expression at character ${position}: layer "${ref.layer}" has ${count} band${count === 1 ? '' : 's'}, there is no band ${ref.band}.`,
      );
    }
    const band = dataset.bands.get(ref.band);
    const key = referenceKey(ref);
    this.bands.push({
      key,
      band,
      type: pixelType(band.dataType, `band ${ref.band} of layer "${ref.layer}"`),
      noData: band.noDataValue,
    });
  }

  close(): void {
    for (const dataset of this.datasets.reverse()) dataset.close();
    for (const path of this.memoryFiles) {
      try {
        gdal.vsimem.release(path);
      } catch {
        // The VRT was never written to memory.
      }
    }
  }
}

/**
 * Opens every layer named in `references` (whose datasources `sources` gives) once, and the bands
 * they name, on the grid of the first reference.
 */
export async function openInputs(
  references: readonly Reference[],
  sources: ReadonlyMap<string, string>,
): Promise<OpenedInputs> {
  const inputs = new InputSet();
  try {
    const datasets = new Map<string, gdal.Dataset>();
    for (const reference of references) {
      const { layer } = reference.ref;
      let dataset = datasets.get(layer);
      if (!dataset) {
        const path = sources.get(layer);
        if (path === undefined)
          throw new BadRequest(
            `Invalid expression at character ${reference.position}: there is no raster layer "${layer}"${minusHint(layer)}.`,
          );
        dataset = await inputs.open(path, layer);
        datasets.set(layer, dataset);
      }
      if (!inputs.bands.some((band) => band.key === referenceKey(reference.ref))) inputs.addBand(dataset, reference);
    }
    return inputs;
  } catch (error) {
    inputs.close();
    throw error;
  }
}
