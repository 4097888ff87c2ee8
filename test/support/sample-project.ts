/** A small QGIS project written by PyQGIS itself, so QGIS Server serves it without complaint. */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const WRITE_PROJECT = `
import sys
from qgis.core import QgsApplication, QgsCoordinateReferenceSystem, QgsProject, QgsVectorLayer
app = QgsApplication([], False)
app.initQgis()
data, target = sys.argv[1], sys.argv[2]
layer = QgsVectorLayer(data, "places", "ogr")
assert layer.isValid(), "the sample GeoJSON did not open"
project = QgsProject.instance()
project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))
project.addMapLayer(layer)
assert project.write(target), "the sample project could not be written"
app.exitQgis()
`;

const PLACES = {
  type: 'FeatureCollection',
  features: [
    { type: 'Feature', properties: { name: 'a' }, geometry: { type: 'Point', coordinates: [2.35, 48.85] } },
    { type: 'Feature', properties: { name: 'b' }, geometry: { type: 'Point', coordinates: [4.83, 45.76] } },
  ],
};

/** Writes `places.geojson` and `places.qgs` (one point layer, "places") into `dir`; returns the .qgs path. */
export async function writeSampleProject(dir: string): Promise<string> {
  const data = join(dir, 'places.geojson');
  const project = join(dir, 'places.qgs');
  await writeFile(data, JSON.stringify(PLACES));
  await run('/usr/bin/python3', ['-c', WRITE_PROJECT, data, project], {
    env: { ...process.env, QT_QPA_PLATFORM: 'offscreen', XDG_RUNTIME_DIR: process.env['XDG_RUNTIME_DIR'] ?? '/tmp' },
  });
  return project;
}

/** A 60 x 60 GetMap of the sample project's "places" over France, at the server `base` names. */
export function sampleGetMapUrl(base: string, project: string, extra: Record<string, string> = {}): URL {
  const url = new URL(base);
  const query = {
    MAP: project,
    SERVICE: 'WMS',
    VERSION: '1.3.0',
    REQUEST: 'GetMap',
    LAYERS: 'places',
    STYLES: '',
    CRS: 'EPSG:4326',
    BBOX: '44,1,50,7',
    WIDTH: '60',
    HEIGHT: '60',
    FORMAT: 'image/png',
    ...extra,
  };
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}
