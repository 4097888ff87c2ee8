import gdal from 'gdal-async';

import { type CrsDefinition } from '../qgis/crs.js';
import { type FieldType, type LayerField } from '../qgis/field-types.js';
import { type Extent, type LayerType } from '../qgis/layer.js';
import { CrsResolver } from './crs.js';
import { type GdalSource } from './datasource.js';
import { isBooleanSubtype, type WrittenType, writtenTypes } from './field-subtypes.js';
import { qgisGeometryNames } from './wkb.js';

export class ProbeError extends Error {}

interface ProbedCommon {
  crs: CrsDefinition | undefined;
  extent: Extent;
}

export interface ProbedVector extends ProbedCommon {
  type: 'vector';
  wkbType: string;
  geometry: string;
  /** The feature id column, needed to publish a database table. */
  keyColumn: string;
}

export interface ProbedRaster extends ProbedCommon {
  type: 'raster';
  bands: number;
  dataType: string;
  /** Approximate minimum and maximum of each band, for the default contrast stretch. */
  bandRanges: Array<{ min: number; max: number }>;
}

export type Probed = ProbedVector | ProbedRaster;

async function openDataset(source: GdalSource): Promise<gdal.Dataset> {
  try {
    return await gdal.openAsync(source.gdalPath, 'r', source.drivers);
  } catch (error) {
    throw new ProbeError(`GDAL cannot open ${source.gdalPath}: ${(error as Error).message}`);
  }
}

function vectorLayer(dataset: gdal.Dataset, source: GdalSource): gdal.Layer {
  const count = dataset.layers.count();
  if (count === 0) throw new ProbeError(`${source.gdalPath} holds no vector layer`);
  let layer: gdal.Layer;
  try {
    layer = dataset.layers.get(source.layerName ?? source.layerIndex ?? 0);
  } catch {
    throw new ProbeError(`${source.gdalPath} has no layer ${source.layerName ?? source.layerIndex}`);
  }
  if (source.filter !== undefined) layer.setAttributeFilter(source.filter);
  return layer;
}

/**
 * The extent of the features a filtered layer keeps, as QGIS computes it. GDAL's PostgreSQL driver
 * answers the whole table's extent whatever the filter, so the kept features are read.
 */
async function filteredExtent(layer: gdal.Layer): Promise<Extent> {
  const envelope = new gdal.Envelope();
  for await (const feature of layer.features) {
    const geometry = feature.getGeometry();
    if (geometry && !geometry.isEmpty()) envelope.merge(geometry.getEnvelope());
  }
  if (envelope.isEmpty()) throw new ProbeError('the filter keeps no feature with a geometry');
  return envelopeExtent(envelope);
}

function envelopeExtent(envelope: gdal.Envelope): Extent {
  return [envelope.minX, envelope.minY, envelope.maxX, envelope.maxY];
}

function rasterExtent(dataset: gdal.Dataset): Extent {
  const transform = dataset.geoTransform ?? [0, 1, 0, 0, 0, -1];
  const { x: width, y: height } = dataset.rasterSize;
  const [x0 = 0, dx = 1, rx = 0, y0 = 0, ry = 0, dy = -1] = transform;
  const xs = [x0, x0 + dx * width, x0 + rx * height, x0 + dx * width + rx * height];
  const ys = [y0, y0 + ry * width, y0 + dy * height, y0 + ry * width + dy * height];
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

async function probeVector(dataset: gdal.Dataset, source: GdalSource, crs: CrsResolver): Promise<ProbedVector> {
  const layer = vectorLayer(dataset, source);
  const names = qgisGeometryNames(layer.geomType);
  let extent: Extent;
  try {
    extent = source.filter === undefined ? envelopeExtent(layer.getExtent(true)) : await filteredExtent(layer);
  } catch {
    extent = [0, 0, 0, 0];
  }
  return {
    type: 'vector',
    crs: layer.srs ? crs.fromSpatialReference(layer.srs) : undefined,
    extent,
    ...names,
    keyColumn: layer.fidColumn || 'fid',
  };
}

async function probeRaster(dataset: gdal.Dataset, crs: CrsResolver): Promise<ProbedRaster> {
  const count = dataset.bands.count();
  if (count === 0) throw new ProbeError('the dataset holds no raster band');
  const first = dataset.bands.get(1);
  const bandRanges: ProbedRaster['bandRanges'] = [];
  for (let index = 1; index <= count; index++) {
    const statistics = await dataset.bands.get(index).computeStatisticsAsync(true);
    bandRanges.push({ min: statistics.min, max: statistics.max });
  }
  const srs = await dataset.srsAsync;
  return {
    type: 'raster',
    crs: srs ? crs.fromSpatialReference(srs) : undefined,
    extent: rasterExtent(dataset),
    bands: count,
    dataType: first.dataType ?? 'Unknown',
    bandRanges,
  };
}

/** Opens a source with GDAL and reads what a layer of the given type needs. */
export async function probeDatasource(source: GdalSource, type: LayerType, crs: CrsResolver): Promise<Probed> {
  const datasource = source.gdalPath;
  const dataset = await openDataset(source);
  try {
    if (type === 'vector') {
      if (dataset.layers.count() === 0) throw new ProbeError(`${datasource} is not vector data`);
      return await probeVector(dataset, source, crs);
    }
    if (dataset.bands.count() === 0) throw new ProbeError(`${datasource} is not raster data`);
    return await probeRaster(dataset, crs);
  } finally {
    // Statistics just computed are saved beside a raster (.aux.xml): flushed on the thread pool,
    // they leave nothing for close to write while it holds the event loop.
    await dataset.flushAsync().catch(() => undefined);
    dataset.close();
  }
}

/** OGR's names of the types of GDAL's fields (`ogrinfo` writes them), by gdal-async's, and the API's type of each. */
const OGR_TYPES: ReadonlyMap<string, readonly [string, FieldType]> = new Map([
  [gdal.OFTInteger, ['Integer', 'integer']],
  [gdal.OFTInteger64, ['Integer64', 'integer']],
  [gdal.OFTReal, ['Real', 'real']],
  [gdal.OFTString, ['String', 'string']],
  [gdal.OFTDate, ['Date', 'date']],
  [gdal.OFTTime, ['Time', 'time']],
  [gdal.OFTDateTime, ['DateTime', 'datetime']],
  [gdal.OFTBinary, ['Binary', 'binary']],
  [gdal.OFTIntegerList, ['IntegerList', 'other']],
  [gdal.OFTInteger64List, ['Integer64List', 'other']],
  [gdal.OFTRealList, ['RealList', 'other']],
  [gdal.OFTStringList, ['StringList', 'other']],
]);

/** The API's field of GDAL's, with the subtype GDAL writes of it (`written`) when it is of the same type. */
function sourceField(field: gdal.FieldDefn, written: WrittenType | undefined): LayerField {
  const [typeName, type] = OGR_TYPES.get(field.type) ?? [field.type, 'other'];
  const subtype = written?.type === typeName ? written.subtype : undefined;
  if (subtype === undefined) return { name: field.name, type, type_name: typeName };
  const boolean = isBooleanSubtype(written);
  return { name: field.name, type: boolean ? 'boolean' : type, type_name: `${typeName}(${subtype})` };
}

/**
 * The fields of a vector source's layer as QGIS reads them, from its definition alone (no feature
 * is read): GDAL's fields, after the key column GDAL takes as the features' ids (a table's primary
 * key, a GeoPackage's `fid`), which QGIS lists as a field too, a 64-bit integer as GDAL's ids are.
 * A field of GDAL's Boolean subtype is `boolean`; a subtype is named as `ogrinfo` does
 * (`Integer(Boolean)`, `Real(Float32)`). ProbeError when GDAL cannot open it or it lacks the layer.
 */
export async function vectorFields(source: GdalSource): Promise<LayerField[]> {
  const dataset = await openDataset(source);
  try {
    const layer = vectorLayer(dataset, source);
    const key: LayerField[] = layer.fidColumn
      ? [{ name: layer.fidColumn, type: 'integer', type_name: 'Integer64' }]
      : [];
    const fields = layer.fields.map((field) => field);
    const written = await writtenTypes(dataset, layer);
    return [...key, ...fields.map((field, index) => sourceField(field, written[index]))];
  } finally {
    dataset.close();
  }
}

/**
 * Transforms an extent (easting first, as GDAL reads sources) to WGS 84 longitude/latitude,
 * following the edges so curved bounds are kept. GDAL transforms in each CRS's EPSG axis order:
 * the points go in northing first where the source's EPSG order says so, and come out latitude first.
 * The whole world when no point transforms, as QGIS writes a layer's WGS 84 extent then.
 */
export function wgs84Extent(extent: Extent, from: Pick<CrsDefinition, 'authid'>): Extent {
  return wgs84Bounds(extent, from) ?? [-180, -90, 180, 90];
}

/** `extent` in WGS 84 longitude/latitude as wgs84Extent transforms it; undefined when no point transforms. */
export function wgs84Bounds(extent: Extent, from: Pick<CrsDefinition, 'authid'>): Extent | undefined {
  if (from.authid === 'EPSG:4326') return extent;
  const source = gdal.SpatialReference.fromUserInput(from.authid);
  const transform = new gdal.CoordinateTransformation(source, gdal.SpatialReference.fromEPSG(4326));
  const northingFirst = CrsResolver.northingFirst(from.authid);
  const [xmin, ymin, xmax, ymax] = extent;
  const xs: number[] = [];
  const ys: number[] = [];
  const steps = 20;
  for (let i = 0; i <= steps; i++) {
    const t = i / steps;
    for (const [x, y] of [
      [xmin + (xmax - xmin) * t, ymin],
      [xmin + (xmax - xmin) * t, ymax],
      [xmin, ymin + (ymax - ymin) * t],
      [xmax, ymin + (ymax - ymin) * t],
    ] as const) {
      try {
        const point = northingFirst ? transform.transformPoint(y, x) : transform.transformPoint(x, y);
        if (Number.isFinite(point.x) && Number.isFinite(point.y)) {
          xs.push(point.y);
          ys.push(point.x);
        }
      } catch {
        // A point outside the projection's domain: the others still bound the extent.
      }
    }
  }
  if (xs.length === 0) return undefined;
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

/**
 * Runs `SELECT <columns> FROM <table> WHERE (<filter>) LIMIT 0` on a database source, as QGIS
 * does on opening a layer with a key column and a filter: ProbeError with the database's message
 * when a column or the filter is not valid there.
 */
export async function checkTableQuery(
  source: GdalSource,
  table: string,
  columns: string[],
  filter: string | undefined,
): Promise<void> {
  const dataset = await openDataset(source);
  const select = columns.length > 0 ? columns.join(', ') : '1';
  const where = filter === undefined || filter.trim() === '' ? '' : ` WHERE (${filter})`;
  try {
    // The result set is released with the dataset.
    await dataset.executeSQLAsync(`SELECT ${select} FROM ${table}${where} LIMIT 0`);
  } catch (error) {
    throw new ProbeError((error as Error).message);
  } finally {
    dataset.close();
  }
}
