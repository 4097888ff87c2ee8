import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import gdal from 'gdal-async';

export interface Fixtures {
  dir: string;
  /** GeoPackage with layers `points`, `lines`, `polygons` (EPSG:4326, around 1..3 E, 44..46 N). */
  geopackage: string;
  shapefile: string;
  /** 3-band Byte GeoTIFF in EPSG:4326: band 1 = 200, band 2 = 40, band 3 = 90. */
  rgbTiff: string;
  /** 1-band Float32 GeoTIFF in EPSG:3857 with no-data -9999 in its first row. */
  floatTiff: string;
}

function addFeature(layer: gdal.Layer, wkt: string, name: string): void {
  const feature = new gdal.Feature(layer);
  feature.setGeometry(gdal.Geometry.fromWKT(wkt));
  feature.fields.set('name', name);
  layer.features.add(feature);
}

function vectorLayer(dataset: gdal.Dataset, name: string, type: number, wkts: string[]): void {
  const layer = dataset.layers.create(name, gdal.SpatialReference.fromEPSG(4326), type);
  layer.fields.add(new gdal.FieldDefn('name', gdal.OFTString));
  wkts.forEach((wkt, index) => addFeature(layer, wkt, `${name}-${index}`));
}

function makeGeopackage(path: string): void {
  const dataset = gdal.open(path, 'w', 'GPKG');
  vectorLayer(dataset, 'points', gdal.wkbPoint, ['POINT(1.5 44.5)', 'POINT(2 45)', 'POINT(2.5 45.5)']);
  vectorLayer(dataset, 'lines', gdal.wkbMultiLineString, ['MULTILINESTRING((1 44,3 46),(1 46,3 44))']);
  vectorLayer(dataset, 'polygons', gdal.wkbMultiPolygon, ['MULTIPOLYGON(((1 44,3 44,3 46,1 46,1 44)))']);
  dataset.close();
}

function makeShapefile(path: string): void {
  const dataset = gdal.open(path, 'w', 'ESRI Shapefile');
  vectorLayer(dataset, 'roads', gdal.wkbLineString, ['LINESTRING(1 44,3 46)']);
  dataset.close();
}

function makeRgbTiff(path: string): void {
  const size = 64;
  const dataset = gdal.open(path, 'w', 'GTiff', size, size, 3, gdal.GDT_Byte);
  dataset.srs = gdal.SpatialReference.fromEPSG(4326);
  dataset.geoTransform = [1, 2 / size, 0, 46, 0, -2 / size];
  [200, 40, 90].forEach((value, index) => {
    dataset.bands.get(index + 1).pixels.write(0, 0, size, size, new Uint8Array(size * size).fill(value));
  });
  dataset.close();
}

function makeFloatTiff(path: string): void {
  const size = 50;
  const dataset = gdal.open(path, 'w', 'GTiff', size, size, 1, gdal.GDT_Float32);
  dataset.srs = gdal.SpatialReference.fromEPSG(3857);
  dataset.geoTransform = [100000, 1000, 0, 5600000, 0, -1000];
  const band = dataset.bands.get(1);
  band.noDataValue = -9999;
  const values = new Float32Array(size * size).map((_, index) => (index < size ? -9999 : index / 10));
  band.pixels.write(0, 0, size, size, values);
  dataset.close();
}

/** Makes the test datasets with GDAL in a new temporary folder. */
export function makeFixtures(): Fixtures {
  const dir = mkdtempSync(join(tmpdir(), 'steward-data-'));
  const fixtures: Fixtures = {
    dir,
    geopackage: join(dir, 'vectors.gpkg'),
    shapefile: join(dir, 'roads.shp'),
    rgbTiff: join(dir, 'rgb.tif'),
    floatTiff: join(dir, 'elevation.tif'),
  };
  makeGeopackage(fixtures.geopackage);
  makeShapefile(fixtures.shapefile);
  makeRgbTiff(fixtures.rgbTiff);
  makeFloatTiff(fixtures.floatTiff);
  return fixtures;
}
