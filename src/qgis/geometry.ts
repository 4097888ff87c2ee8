/**
 * The geometry classes of QGIS vector layers (QgsWkbTypes::GeometryType), one row each: the name a
 * `<maplayer geometry="...">` carries, the `<layerGeometryType>` code a QML carries, the name the
 * API and the internal database use, and the kind of symbol that draws it.
 */
export const GEOMETRY_CLASSES = [
  { layer: 'Point', code: '0', geometry: 'point', symbol: 'marker' },
  { layer: 'Line', code: '1', geometry: 'line', symbol: 'line' },
  { layer: 'Polygon', code: '2', geometry: 'polygon', symbol: 'fill' },
] as const;

export type GeometryClass = (typeof GEOMETRY_CLASSES)[number];
export type Geometry = GeometryClass['geometry'];

export const GEOMETRIES: readonly Geometry[] = GEOMETRY_CLASSES.map((row) => row.geometry);

/** The row whose `key` column holds `value`, if any. */
export function geometryClass(key: keyof GeometryClass, value: string | undefined): GeometryClass | undefined {
  return GEOMETRY_CLASSES.find((row) => row[key] === value);
}
