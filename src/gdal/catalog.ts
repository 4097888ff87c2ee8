/**
 * What GDAL can open in a folder, described for a person choosing a layer: each dataset's vector
 * layers (geometry, CRS, feature count) and raster bands, with the datasource string that adds it.
 * Only metadata is read: no statistics, no features.
 */
import { basename, extname } from 'node:path';

import gdal from 'gdal-async';

import { type CrsResolver } from './crs.js';
import { qgisGeometryNames } from './wkb.js';

export interface CatalogLayer {
  type: 'vector' | 'raster';
  /** A layer name to suggest: the vector layer's, or the raster file's without its extension. */
  name: string;
  /** The datasource that adds this layer to a project. */
  datasource: string;
  /** `EPSG:<code>` when GDAL identifies the CRS. */
  crs?: string;
  /** Vector: the QGIS WKB type, e.g. `MultiPolygon`. */
  geometry?: string;
  /** Vector: the number of features, when the format knows it without reading them. */
  features?: number;
  /** Raster: the number of bands, their pixel type and the size in pixels. */
  bands?: number;
  data_type?: string;
  width?: number;
  height?: number;
}

/** Files that only accompany a dataset (index, projection, overviews, statistics, journals). */
const SIDECAR = /\.(aux\.xml|ovr|msk|prj|shx|dbf|cpg|qix|sbn|sbx|qml|sld|xml|gpkg-wal|gpkg-shm|tfw|wld|lock)$/i;

export function isSidecar(fileName: string): boolean {
  return SIDECAR.test(fileName);
}

function crsOf(srs: gdal.SpatialReference | null, crs: CrsResolver): string | undefined {
  if (!srs) return undefined;
  try {
    return crs.fromSpatialReference(srs)?.authid;
  } catch {
    return undefined;
  }
}

function vectorLayers(dataset: gdal.Dataset, path: string, crs: CrsResolver): CatalogLayer[] {
  const layers: CatalogLayer[] = [];
  dataset.layers.forEach((layer) => {
    const { wkbType, geometry } = qgisGeometryNames(layer.geomType);
    if (geometry === 'Null') return;
    const count = layer.features.count(false);
    layers.push({
      type: 'vector',
      name: layer.name,
      datasource: `${path}|layername=${layer.name}`,
      ...(crsOf(layer.srs, crs) !== undefined && { crs: crsOf(layer.srs, crs) }),
      geometry: wkbType,
      ...(count >= 0 && { features: count }),
    });
  });
  return layers;
}

function rasterLayer(dataset: gdal.Dataset, path: string, crs: CrsResolver): CatalogLayer {
  const authid = crsOf(dataset.srs, crs);
  return {
    type: 'raster',
    name: basename(path, extname(path)),
    datasource: path,
    ...(authid !== undefined && { crs: authid }),
    bands: dataset.bands.count(),
    data_type: dataset.bands.get(1).dataType ?? 'Unknown',
    width: dataset.rasterSize.x,
    height: dataset.rasterSize.y,
  };
}

/** The layers GDAL finds in a file (or `/vsis3/` object); empty when GDAL cannot open it. */
export async function datasetLayers(path: string, crs: CrsResolver): Promise<CatalogLayer[]> {
  let dataset: gdal.Dataset;
  try {
    dataset = await gdal.openAsync(path, 'r');
  } catch {
    return [];
  }
  try {
    const layers = vectorLayers(dataset, path, crs);
    if (dataset.bands.count() > 0) layers.push(rasterLayer(dataset, path, crs));
    return layers;
  } finally {
    dataset.close();
  }
}

/** A libpq connection value, quoted. */
function libpqValue(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** GDAL's connection string of a connection service, with libpq's own `key=value` settings after it. */
export function postgresConnection(service: string, settings: Record<string, string> = {}): string {
  const extra = Object.entries(settings).map(([key, value]) => ` ${key}=${libpqValue(value)}`);
  return `PG:service=${libpqValue(service)}${extra.join('')}`;
}

/** The datasource of a table of a connection service, as QGIS writes it. */
export function postgresDatasource(service: string, schema: string, table: string, geometryColumn: string): string {
  const quote = (identifier: string): string => `"${identifier.replace(/"/g, '""')}"`;
  return `service=${libpqValue(service)} table=${quote(schema)}.${quote(table)} (${geometryColumn})`;
}

/**
 * The vector layers of a PostgreSQL database reached through a connection service, as datasources
 * in QGIS's form (`service='...' table="schema"."table" (column)`).
 */
export async function postgresLayers(service: string, crs: CrsResolver): Promise<CatalogLayer[]> {
  const dataset = await gdal.openAsync(postgresConnection(service), 'r', ['PostgreSQL']);
  try {
    const layers: CatalogLayer[] = [];
    dataset.layers.forEach((layer) => {
      const { wkbType, geometry } = qgisGeometryNames(layer.geomType);
      if (geometry === 'Null') return;
      const { schema, table } = splitTableName(layer.name);
      const authid = crsOf(layer.srs, crs);
      layers.push({
        type: 'vector',
        name: table,
        datasource: postgresDatasource(service, schema, table, layer.geomColumn),
        ...(authid !== undefined && { crs: authid }),
        geometry: wkbType,
      });
    });
    return layers;
  } finally {
    dataset.close();
  }
}

/** GDAL names a table `table` in the public schema, `schema.table` elsewhere, `...(column)` when it has several geometries. */
function splitTableName(layerName: string): { schema: string; table: string } {
  const name = layerName.replace(/\([^()]*\)$/, '');
  const dot = name.indexOf('.');
  return dot < 0 ? { schema: 'public', table: name } : { schema: name.slice(0, dot), table: name.slice(dot + 1) };
}
