import gdal from 'gdal-async';

/**
 * The files GDAL reads a dataset from (a Shapefile's .shp, .shx, .dbf and .prj, a GeoTIFF's .ovr
 * and .aux.xml), the dataset's own path first; undefined when GDAL cannot open it.
 */
export async function datasetFiles(path: string): Promise<string[] | undefined> {
  let dataset: gdal.Dataset;
  try {
    dataset = await gdal.openAsync(path);
  } catch {
    return undefined;
  }
  try {
    const files = dataset.getFileList().filter((file) => !file.startsWith('/vsi'));
    return [path, ...files.filter((file) => file !== path)];
  } finally {
    dataset.close();
  }
}
