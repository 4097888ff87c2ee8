import gdal from 'gdal-async';

const BASE_NAMES: Record<number, string> = {
  0: 'Unknown',
  1: 'Point',
  2: 'LineString',
  3: 'Polygon',
  4: 'MultiPoint',
  5: 'MultiLineString',
  6: 'MultiPolygon',
  7: 'GeometryCollection',
  8: 'CircularString',
  9: 'CompoundCurve',
  10: 'CurvePolygon',
  11: 'MultiCurve',
  12: 'MultiSurface',
  100: 'NoGeometry',
};

const GEOMETRY_CLASSES: Record<string, string> = {
  Point: 'Point',
  MultiPoint: 'Point',
  LineString: 'Line',
  MultiLineString: 'Line',
  CircularString: 'Line',
  CompoundCurve: 'Line',
  MultiCurve: 'Line',
  Polygon: 'Polygon',
  MultiPolygon: 'Polygon',
  CurvePolygon: 'Polygon',
  MultiSurface: 'Polygon',
  NoGeometry: 'Null',
};

/** An OGR geometry type code as QGIS names the WKB type (`MultiLineString`, `PointZ`) and its class. */
export function qgisGeometryNames(ogrType: number): { wkbType: string; geometry: string } {
  const has25D = (ogrType & gdal.wkb25DBit) !== 0;
  const code = ogrType & ~gdal.wkb25DBit;
  const base = BASE_NAMES[code % 1000] ?? 'Unknown';
  const dimension = Math.floor(code / 1000);
  const suffix = has25D || dimension === 1 ? 'Z' : dimension === 2 ? 'M' : dimension === 3 ? 'ZM' : '';
  return { wkbType: base + suffix, geometry: GEOMETRY_CLASSES[base] ?? 'Unknown' };
}
