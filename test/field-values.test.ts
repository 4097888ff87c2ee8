/**
 * `GET .../layers/{layer}/fields/{field}/values` on a real Steward: a layer of 1,200 points whose
 * values past the 500th feature add categories and widen the range, answered as GDAL's SQL
 * (`SELECT DISTINCT`, `MIN`, `MAX` through ogr2ogr) answers over the same GeoPackage; the limit,
 * the refusals, and the 403 of an identity whose roles filter the layer.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';
import { classedPoint, writePoints } from './support/points.js';
import { type Stack, startStack } from './support/stack.js';

const ADMIN = 'field-values-administrator';
const FEATURES = 1200;
/** Rows of the CSV layer whose reading takes some 20 s or more: far longer than the wait for its worker to go. */
const LONG_READ_ROWS = 5_000_000;

/** The GDAL worker processes of this process (src/gdal/gdal-child.ts), whose Steward runs in it. */
function gdalWorkers(): number[] {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim();
  return children
    .split(/\s+/)
    .filter((pid) => pid !== '')
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('gdal-child-main');
      } catch {
        return false;
      }
    });
}

/** Until `condition` holds, at most `ms`; whether it did. */
async function within(ms: number, condition: () => boolean): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return condition();
}

/** The rows ogr2ogr writes for an OGR SQL statement over the GeoPackage, as CSV without its heading. */
function ogrSql(gpkg: string, sql: string): string[][] {
  const csv = execFileSync('ogr2ogr', ['-f', 'CSV', '/vsistdout/', gpkg, '-sql', sql], { encoding: 'utf8' });
  return csv
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(',').map((cell) => cell.replace(/^"|"$/g, '')));
}

interface Values {
  type: string;
  values: Array<string | number>;
  truncated: boolean;
  min?: number;
  max?: number;
}

describe("a vector layer's field values over every feature, as GDAL reads them", () => {
  let stack: Stack;
  let dir: string;
  let gpkg: string;
  const get = (path: string, token = ADMIN) =>
    apiCall(stack.api.url, 'GET', `/api/projects/field${path}`, undefined, token);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-field-values-'));
    gpkg = join(dir, 'places.gpkg');
    writePoints(gpkg, FEATURES, classedPoint);
    stack = await startStack({ apiToken: ADMIN, dataRoots: [dir] });
    const admin = (method: string, path: string, body?: unknown) => apiCall(stack.api.url, method, path, body, ADMIN);
    assert.equal((await admin('POST', '/api/projects', { name: 'field', author: 'Ada' })).status, 201);
    const layer = { type: 'vector', name: 'places', datasource: `${gpkg}|layername=places` };
    assert.equal((await admin('POST', '/api/projects/field/layers', layer)).status, 201);
  });

  after(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a text field's distinct values are those of SELECT DISTINCT, past the 500th feature", async () => {
    const answer = await get('/layers/places/fields/kind/values');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const expected = ogrSql(gpkg, 'SELECT DISTINCT kind FROM places WHERE kind IS NOT NULL ORDER BY kind').map(
      ([kind]) => kind,
    );
    assert.equal(expected.length, 12, 'GDAL finds 12 kinds');
    assert.deepEqual(answer.body, { type: 'string', values: expected, truncated: false });
  });

  test("a numeric field's minimum and maximum are those of MIN and MAX, its values numbers", async () => {
    const answer = await get('/layers/places/fields/height/values');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const body = answer.body as Values;
    const [[min, max] = []] = ogrSql(gpkg, 'SELECT MIN(height), MAX(height) FROM places');
    assert.deepEqual([body.min, body.max], [Number(min), Number(max)]);
    assert.deepEqual([body.min, body.max], [-20, 1000.5], 'beyond what the first 500 features hold');
    const distinct = ogrSql(gpkg, 'SELECT DISTINCT height FROM places ORDER BY height').map(([value]) => Number(value));
    assert.deepEqual(body.values, distinct);
    assert.equal(body.type, 'real');
    assert.equal(body.truncated, false);
  });

  test("a BOOLEAN column's values are 0 and 1 of type boolean, as the fields route types it", async () => {
    const flagged = join(dir, 'flagged.gpkg');
    copyFileSync(gpkg, flagged);
    for (const sql of ['ALTER TABLE places ADD COLUMN open BOOLEAN', "UPDATE places SET open = (kind = 'k01')"])
      execFileSync('ogrinfo', ['-q', flagged, '-sql', sql]);
    const layer = { type: 'vector', name: 'flagged', datasource: `${flagged}|layername=places` };
    assert.equal((await apiCall(stack.api.url, 'POST', '/api/projects/field/layers', layer, ADMIN)).status, 201);
    const fields = (await get('/layers/flagged/fields')).body as Array<{ name: string; type: string }>;
    assert.equal(fields.find((field) => field.name === 'open')?.type, 'boolean');
    const answer = await get('/layers/flagged/fields/open/values');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body, { type: 'boolean', values: [0, 1], truncated: false });
    const count = (await get('/layers/flagged/fields/fid/values?limit=1')).body as Values;
    assert.equal(count.type, 'integer', 'the key column stays an integer');
  });

  test('gives the smallest values up to the limit, and says the field holds more', async () => {
    const answer = await get('/layers/places/fields/kind/values?limit=5');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const body = answer.body as Values;
    assert.equal(body.truncated, true);
    assert.equal(body.values.length, 5);
    const all = ((await get('/layers/places/fields/kind/values')).body as Values).values;
    assert.deepEqual(body.values, all.slice(0, 5), 'the 5 smallest, as ORDER BY ... LIMIT keeps them');
    const exact = (await get('/layers/places/fields/kind/values?limit=12')).body as Values;
    assert.equal(exact.truncated, false, 'as many values as the limit is not truncated');
  });

  test('refuses an unknown field, layer or limit, and a source broken, in words with a code', async () => {
    const field = await get('/layers/places/fields/colour/values');
    assert.equal(field.status, 404);
    assert.equal((field.body as { code: string }).code, 'field_not_found');
    assert.match((field.body as { error: string }).error, /no field "colour".*kind, height/);
    const layer = await get('/layers/nowhere/fields/kind/values');
    assert.equal(layer.status, 404);
    assert.equal((layer.body as { code: string }).code, 'layer_not_found');
    const copy = join(dir, 'gone.gpkg');
    copyFileSync(gpkg, copy);
    const gone = { type: 'vector', name: 'gone', datasource: `${copy}|layername=places` };
    assert.equal((await apiCall(stack.api.url, 'POST', '/api/projects/field/layers', gone, ADMIN)).status, 201);
    // Still a file in the data folder, no longer a GeoPackage.
    writeFileSync(copy, 'not a GeoPackage');
    const unreadable = await get('/layers/gone/fields/kind/values');
    assert.equal(unreadable.status, 422, JSON.stringify(unreadable.body));
    assert.equal((unreadable.body as { code: string }).code, 'datasource_unreadable');
    for (const limit of ['0', '10001', 'many']) {
      const answer = await get(`/layers/places/fields/kind/values?limit=${limit}`);
      assert.equal(answer.status, 400, limit);
    }
  });

  test('stops reading once the client closes its connection', async () => {
    const csv = join(dir, 'long.csv');
    const rows = Array.from({ length: LONG_READ_ROWS }, (_, row) => `${row % 90},${row % 45},k${row % 5}\n`);
    writeFileSync(csv, `x,y,kind\n${rows.join('')}`);
    const layer = { type: 'vector', name: 'long', datasource: csv, crs: 'EPSG:4326' };
    assert.equal((await apiCall(stack.api.url, 'POST', '/api/projects/field/layers', layer, ADMIN)).status, 201);
    const client = new AbortController();
    const request = fetch(`${stack.api.url}/api/projects/field/layers/long/fields/kind/values`, {
      headers: { authorization: `Bearer ${ADMIN}` },
      signal: client.signal,
    }).catch((error: unknown) => error);
    let reading: number[] = [];
    assert.ok(await within(10_000, () => (reading = gdalWorkers()).length > 0), 'a GDAL worker reads the layer');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    client.abort();
    assert.ok((await request) instanceof Error);
    assert.ok(
      await within(5000, () => reading.every((pid) => !gdalWorkers().includes(pid))),
      `the workers reading (${reading.join(', ')}) are gone within 5 s, long before the read would end`,
    );
  });

  test("refuses an identity whose roles filter the layer's features, not one they leave it whole", async () => {
    const admin = (method: string, path: string, body?: unknown) => apiCall(stack.api.url, method, path, body, ADMIN);
    const role = (layers: Record<string, unknown>) => ({ projects: { field: { access: 'read', layers } } });
    const filter = { places: { filter: `"kind" = 'k01'` } };
    assert.equal((await admin('PUT', '/api/roles/filtered', role(filter))).status, 201);
    assert.equal((await admin('PUT', '/api/roles/whole', role({}))).status, 201);
    const token = async (name: string): Promise<string> =>
      ((await admin('POST', '/api/tokens', { name, roles: [name] })).body as { token: string }).token;
    const filtered = await get('/layers/places/fields/kind/values', await token('filtered'));
    assert.equal(filtered.status, 403, JSON.stringify(filtered.body));
    const whole = await get('/layers/places/fields/kind/values', await token('whole'));
    assert.equal(whole.status, 200, JSON.stringify(whole.body));
  });
});
