/** A CRS and a raster layer definition small enough for project documents built in tests. */
import { type CrsDefinition } from '../../src/qgis/crs.js';
import { type MapLayerDefinition } from '../../src/qgis/layer.js';

export const WGS84: CrsDefinition = {
  wkt: 'GEOGCRS["WGS 84"]',
  proj4: '+proj=longlat +datum=WGS84 +no_defs',
  srsid: 3452,
  srid: 4326,
  authid: 'EPSG:4326',
  description: 'WGS 84',
  projectionAcronym: 'longlat',
  ellipsoidAcronym: 'EPSG:7030',
  geographic: true,
};

/** A GeoTIFF layer named `name`, with id `<name>_id`. */
export const raster = (name: string): MapLayerDefinition => ({
  id: `${name}_id`,
  name,
  type: 'raster',
  provider: 'gdal',
  datasource: `/data/${name}.tif`,
  crs: WGS84,
  extent: [1, 44, 3, 46],
  wgs84Extent: [1, 44, 3, 46],
  styleElements: [],
});
