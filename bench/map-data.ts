/**
 * Layers worth drawing for the GetMap comparison: the test fixtures are a few features and a
 * flat 64 x 64 raster, which QGIS Server draws in its minimum time. These are an aerial-photo-like
 * RGB raster and a parcel map, made with GDAL.
 */
import { join } from 'node:path';

import gdal from 'gdal-async';

const PHOTO_SIZE = 4000;
const PARCELS_PER_SIDE = 70;

/** 4000 x 4000 RGB GeoTIFF in EPSG:3857 with smooth fields and texture in each band. */
function writePhoto(path: string): void {
  const dataset = gdal.open(path, 'w', 'GTiff', PHOTO_SIZE, PHOTO_SIZE, 3, gdal.GDT_Byte, ['TILED=YES']);
  dataset.srs = gdal.SpatialReference.fromEPSG(3857);
  dataset.geoTransform = [260000, 0.5, 0, 6250000, 0, -0.5];
  const rows = 250;
  const pixels = new Uint8Array(PHOTO_SIZE * rows);
  for (let band = 1; band <= 3; band++) {
    for (let y0 = 0; y0 < PHOTO_SIZE; y0 += rows) {
      for (let i = 0; i < pixels.length; i++) {
        const x = i % PHOTO_SIZE;
        const y = y0 + Math.floor(i / PHOTO_SIZE);
        pixels[i] = 128 + 60 * Math.sin(x / (90 * band)) * Math.cos(y / 70) + 40 * Math.sin((x * y) / 5000);
      }
      dataset.bands.get(band).pixels.write(0, y0, PHOTO_SIZE, rows, pixels);
    }
  }
  dataset.close();
}

/** A grid of 70 x 70 slightly skewed parcels over the same area, in a GeoPackage layer `parcels`. */
function writeParcels(path: string): void {
  const dataset = gdal.open(path, 'w', 'GPKG');
  const layer = dataset.layers.create('parcels', gdal.SpatialReference.fromEPSG(3857), gdal.wkbPolygon);
  const step = (PHOTO_SIZE * 0.5) / PARCELS_PER_SIDE;
  for (let row = 0; row < PARCELS_PER_SIDE; row++) {
    for (let column = 0; column < PARCELS_PER_SIDE; column++) {
      const x = 260000 + column * step;
      const y = 6250000 - row * step;
      const skew = ((row * 7 + column * 3) % 5) - 2;
      const ring = [
        [x, y],
        [x + step - 2, y + skew],
        [x + step - 2, y - step + 2],
        [x + skew, y - step + 2],
        [x, y],
      ];
      const feature = new gdal.Feature(layer);
      feature.setGeometry(gdal.Geometry.fromWKT(`POLYGON((${ring.map((point) => point.join(' ')).join(',')}))`));
      layer.features.add(feature);
    }
  }
  dataset.close();
}

export interface MapData {
  photo: string;
  parcels: string;
}

export function makeMapData(dir: string): MapData {
  const data = { photo: join(dir, 'photo.tif'), parcels: join(dir, 'parcels.gpkg') };
  writePhoto(data.photo);
  writeParcels(data.parcels);
  return data;
}
