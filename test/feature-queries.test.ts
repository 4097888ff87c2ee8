/**
 * The features behind the console's feature info and attribute table, against a real QGIS Server:
 * `GET .../feature-info` (GetFeatureInfo of a view's pixel) and `GET .../layers/{layer}/features`
 * (WFS GetFeature pages), compared with the demo data as GDAL reads it, and their refusals.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { createTownWithDistricts } from './support/demo-town.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

interface Row {
  fid: number;
  name: string;
  population: number;
}

/** The districts as GDAL reads them from the GeoPackage, by feature id. */
function districtsByGdal(gpkg: string): Row[] {
  const script = `
import json, sys
from osgeo import ogr
dataset = ogr.Open(sys.argv[1])
layer = dataset.GetLayerByName("districts")
print(json.dumps([{"fid": f.GetFID(), "name": f.GetField("name"), "population": f.GetField("population")} for f in layer]))
`;
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, gpkg], { encoding: 'utf8' })) as Row[];
}

describe('feature info and attribute pages through QGIS Server', () => {
  let stack: Stack;
  let dir: string;
  let rows: Row[];
  /** The districts' extent, `xmin ymin xmax ymax` in EPSG:4326. */
  let extent: number[];
  const get = async (path: string) => stack.call('GET', `/api/projects/town${path}`);
  /** The feature info of pixel (i, j) of a 90 x 90 view of the districts' extent. */
  const infoAt = (i: number, j: number, layers = 'districts') =>
    get(`/feature-info?layers=${layers}&crs=EPSG:4326&bbox=${extent.join(',')}&width=90&height=90&i=${i}&j=${j}`);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-feature-queries-'));
    const demo = join(dir, 'demo');
    execFileSync('/usr/bin/python3', [resolve(import.meta.dirname, '..', 'scripts', 'demo-data.py'), demo]);
    rows = districtsByGdal(join(demo, 'town.gpkg'));
    stack = await startStack({ dataRoots: [demo] });
    await createTownWithDistricts(stack, demo);
    // Published under a short name: the answers still name the project's layer.
    assert.equal(
      (await stack.call('PATCH', '/api/projects/town/layers/districts', { short_name: 'quartiers' })).status,
      200,
    );
    extent = ((await get('/layers/districts')).body as { bbox: string }).bbox.split(/[ ,]+/).map(Number);
  });

  after(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the feature under a pixel is the district GDAL has there, with its attributes', async () => {
    // The town is 3 x 3 districts, the first at the bottom left: pixel rows count from the top.
    for (const [i, j, index] of [
      [45, 45, 4],
      [10, 80, 0],
      [80, 10, 8],
    ] as const) {
      const answer = await infoAt(i, j);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const expected = rows[index] as Row;
      assert.deepEqual((answer.body as { features: unknown[] }).features, [
        { layer: 'districts', id: String(expected.fid), properties: expected },
      ]);
    }
  });

  test('a view that is wrong is refused with a sentence', async () => {
    const outside = await infoAt(90, 10);
    assert.equal(outside.status, 400);
    assert.match((outside.body as { error: string }).error, /i must be a pixel of the view, 0 to 89, not 90/);
    const unknown = await infoAt(1, 1, 'districts,nowhere');
    assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
    // A style the layer does not have is the client's mistake, said as such, not QGIS Server's error (a 502).
    const view = `layers=districts&styles=nowhere&crs=EPSG:4326&bbox=${extent.join(',')}&width=90&height=90`;
    for (const path of [`/feature-info?${view}&i=1&j=1`, `/wms?${view}`]) {
      const style = await get(path);
      assert.equal(style.status, 404, `${path}: ${JSON.stringify(style.body)}`);
      assert.match(
        (style.body as { error: string }).error,
        /^layer "districts" has no style "nowhere"; its styles are /,
      );
    }
  });

  test('pages of features need WFS, and are the rows GDAL reads in order, with the total', async () => {
    const refused = await get('/layers/districts/features');
    assert.equal(refused.status, 409);
    assert.match((refused.body as { error: string }).error, /not published by WFS/);
    assert.equal(
      (await stack.call('PATCH', '/api/projects/town/services', { wfs: { layers: ['districts'] } })).status,
      200,
    );

    const page = await get('/layers/districts/features?start=3&count=4');
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(page.body, {
      total: rows.length,
      start: 3,
      features: rows.slice(3, 7).map((row) => ({ id: String(row.fid), properties: row })),
    });
    const last = (await get('/layers/districts/features?start=8')).body as { features: unknown[] };
    assert.equal(last.features.length, rows.length - 8);
    for (const query of ['count=0', 'count=501', 'start=-1', 'start=two']) {
      const bad = await get(`/layers/districts/features?${query}`);
      assert.equal(bad.status, 400, `${query}: ${JSON.stringify(bad.body)}`);
      assert.equal(typeof (bad.body as { error: unknown }).error, 'string');
    }
    assert.equal((await get('/layers/nowhere/features')).status, 404);
  });
});
