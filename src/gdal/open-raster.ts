/** Opening a raster for processing, with failures worded for the person who named it. */
import gdal from 'gdal-async';

import { Unprocessable } from '../errors.js';

/** Opens `path` read-only; 422 when GDAL cannot, or when it holds no raster band. */
export async function openRaster(path: string, description = `the raster ${path}`): Promise<gdal.Dataset> {
  let dataset: gdal.Dataset;
  try {
    dataset = await gdal.openAsync(path, 'r');
  } catch (error) {
    throw new Unprocessable(`GDAL cannot open ${description}: ${(error as Error).message}`, {
      code: 'datasource_unreadable',
    });
  }
  if (dataset.bands.count() === 0) {
    dataset.close();
    throw new Unprocessable(`GDAL finds no raster band in ${description}.`);
  }
  return dataset;
}
