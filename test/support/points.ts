import { closeSync, openSync, rmSync, writeSync } from 'node:fs';

import gdal from 'gdal-async';

/** Features written to the intermediate text file at a time. */
const BATCH = 10_000;

/**
 * A GeoPackage of `count` points spread over 1..3 E, 44..46 N (EPSG:4326), each with a name, in a
 * layer `places`. The points go through a GeoJSON text sequence beside it, which GDAL's
 * VectorTranslate copies in large transactions: gdal-async adds features one transaction each.
 */
export function writePoints(path: string, count: number): void {
  const text = `${path}.geojsons`;
  const columns = Math.ceil(Math.sqrt(count));
  const file = openSync(text, 'w');
  try {
    for (let start = 0; start < count; start += BATCH) {
      const lines: string[] = [];
      for (let index = start; index < Math.min(count, start + BATCH); index += 1) {
        const x = 1 + (2 * (index % columns)) / columns;
        const y = 44 + (2 * Math.floor(index / columns)) / columns;
        const geometry = { type: 'Point', coordinates: [x, y] };
        lines.push(JSON.stringify({ type: 'Feature', properties: { name: `place ${index}` }, geometry }));
      }
      writeSync(file, `${lines.join('\n')}\n`);
    }
  } finally {
    closeSync(file);
  }
  const source = gdal.open(text);
  try {
    gdal.vectorTranslate(path, source, ['-f', 'GPKG', '-nln', 'places', '-nlt', 'POINT']).close();
  } finally {
    source.close();
    rmSync(text, { force: true });
  }
}
