/**
 * What GDAL opens for a layer: a dataset name and the vector layer inside it. The providers of
 * `src/services/providers/` make one from the datasource QGIS stores; GDAL code never parses a
 * QGIS datasource itself.
 */

export interface GdalSource {
  /** `file`: a local path; `object-storage`: `/vsis3/`; `database`: a `PG:` connection string. */
  kind: 'file' | 'object-storage' | 'database';
  /** What `gdal.open` takes. */
  gdalPath: string;
  /** The vector layer inside the dataset, by name or by index (the first when neither). */
  layerName?: string;
  layerIndex?: number;
  /** Drivers to open it with (PostGIS Raster also claims `PG:` and fails where its extension is missing). */
  drivers?: string[];
  /** A database layer's table (GDAL's layer name joins schema, table and geometry column), for SQL of Steward's own. */
  table?: { schema?: string; name: string };
  /** The layer's subset string (a database's `sql=`), a WHERE expression: the layer is the features it keeps. */
  filter?: string;
}

/** The kind of a path GDAL opens. */
export function pathKind(path: string): GdalSource['kind'] {
  return path.startsWith('/vsis3/') ? 'object-storage' : 'file';
}

/** A memo key of a source: equal keys open the same layer of the same dataset. */
export function gdalSourceKey(source: GdalSource): string {
  return [source.gdalPath, source.layerName ?? '', source.layerIndex ?? '', source.filter ?? ''].join('\u0000');
}
