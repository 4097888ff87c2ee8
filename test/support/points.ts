import { closeSync, openSync, rmSync, writeSync } from 'node:fs';

import gdal from 'gdal-async';

/** Features written to the intermediate text file at a time. */
const BATCH = 10_000;

/** A point's attributes by its index: its name unless told. */
export type PointProperties = (index: number) => Record<string, string | number | null>;

/**
 * Points of 12 kinds (`k00` to `k11`), 100 each in order, so that the first 500 hold 5 of them,
 * every 97th of none; a `height` of 0 to 99 over the first 500, the smallest (-20) and largest
 * (1000.5) later: what classifying from the first 500 features gets wrong.
 */
export const classedPoint: PointProperties = (index) => ({
  kind: index % 97 === 0 ? null : `k${String(Math.floor(index / 100)).padStart(2, '0')}`,
  height: index === 900 ? 1000.5 : index === 1000 ? -20 : index % 100,
});

/**
 * A GeoPackage of `count` points spread over 1..3 E, 44..46 N (EPSG:4326), each with a name (or
 * the attributes `properties` gives), in a layer `places`. The points go through a GeoJSON text
 * sequence beside it, which GDAL's VectorTranslate copies in large transactions: gdal-async adds
 * features one transaction each.
 */
export function writePoints(
  path: string,
  count: number,
  properties: PointProperties = (index) => ({ name: `place ${index}` }),
): void {
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
        lines.push(JSON.stringify({ type: 'Feature', properties: properties(index), geometry }));
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
