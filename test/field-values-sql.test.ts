/**
 * A field's values asked of the database in its own SQL (src/gdal/field-values-sql.ts), on a real
 * Steward over a PostGIS table of 1,500 rows: values that appear only past the first thousand
 * rows, a layer filter, a text column of a collation that sorts otherwise than JavaScript does, a
 * numeric and a boolean column. Each answer is checked against the rows PostgreSQL gives (sorted
 * and cut in JavaScript), against GDAL's read of every feature of the same source, and the SQL
 * path is shown taken; the same for a GeoPackage (a case-blind column too); a JSON column (no equality in SQL) falls back.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { type GdalSource } from '../src/gdal/datasource.js';
import { type FieldValues, readFieldValues } from '../src/gdal/field-values.js';
import { databaseFieldValues } from '../src/gdal/field-values-sql.js';
import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';
import { classedPoint, writePoints } from './support/points.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type Stack, startStack } from './support/stack.js';

const ADMIN = 'field-values-sql-administrator';
const ROWS = 1500;
const FILTER = `"kind" <> 'k03'`;

/** JavaScript's order of the values route: numbers by value, text by `<`. */
const jsOrder = (a: string | number, b: string | number): number =>
  typeof a === 'number' && typeof b === 'number' ? a - b : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;

/** The answer the route owes for these distinct values (nulls already out) at `limit`. */
function owed(type: string, distinct: Array<string | number>, limit: number): FieldValues {
  const sorted = [...distinct].sort(jsOrder);
  const numbers = sorted.filter((value): value is number => typeof value === 'number');
  const range = ['integer', 'real'].includes(type) && numbers.length > 0 && { min: numbers[0], max: numbers.at(-1) };
  return { type, values: sorted.slice(0, limit), truncated: sorted.length > limit, ...range };
}

/** What the SQL path alone answers over `source` (undefined when it would fall back). */
function sqlAnswer(source: GdalSource, field: string, type: string, limit: number): FieldValues | undefined {
  const dataset = gdal.open(source.gdalPath, 'r', source.drivers);
  try {
    const layer = dataset.layers.get(source.layerName ?? 0);
    const isKey = layer.fidColumn === field;
    return databaseFieldValues(dataset, layer, source, { name: field, type, isKey }, limit);
  } finally {
    dataset.close();
  }
}

describe("a field's values asked of its database in SQL, as GDAL's full read answers them", () => {
  let db: TestDatabase;
  let stack: Stack;
  let dir: string;
  let source: GdalSource;
  const get = (path: string) =>
    apiCall(stack.api.url, 'GET', `/api/projects/sqlvalues/layers/${path}`, undefined, ADMIN);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-field-values-sql-'));
    db = await startTestDatabase();
    // Kinds k00..k09 in blocks of 150 rows (k08 and k09 only past row 1,000), some texts whose
    // ICU order is not JavaScript's, every 50th row null; depth widest past row 1,000.
    await db.sql(`
      CREATE SCHEMA survey;
      CREATE TABLE survey.sites (
        id serial PRIMARY KEY, kind text COLLATE "und-x-icu", depth numeric(8, 2), open boolean, tags json,
        geom geometry(Point, 4326));
      INSERT INTO survey.sites (kind, depth, open, tags, geom)
        SELECT CASE WHEN i % 50 = 0 THEN NULL
                    WHEN i % 7 = 0 THEN (ARRAY['Zulu', 'alpha', 'Émile', 'émile', 'Bravo'])[i % 5 + 1]
                    ELSE 'k' || lpad(((i - 1) / 150)::text, 2, '0') END,
               CASE WHEN i = 1200 THEN 9999.75 WHEN i = 1400 THEN -12.5 WHEN i % 50 = 0 THEN NULL ELSE (i % 100) / 4.0 END,
               CASE WHEN i % 50 = 0 THEN NULL ELSE i % 3 = 0 END,
               json_build_object('n', i % 4),
               ST_SetSRID(ST_MakePoint(1 + (i % 40) / 20.0, 44 + (i / 40) / 40.0), 4326)
        FROM generate_series(1, ${ROWS}) i;
      GRANT USAGE ON SCHEMA survey TO ${db.user};
      GRANT SELECT ON survey.sites TO ${db.user};
    `);
    source = {
      kind: 'database',
      gdalPath: `PG:service=${db.service}`,
      layerName: 'survey.sites(geom)',
      drivers: ['PostgreSQL'],
      table: { schema: 'survey', name: 'sites' },
      filter: FILTER,
    };
    stack = await startStack({ apiToken: ADMIN, dataRoots: [dir] });
    const admin = (method: string, path: string, body?: unknown) => apiCall(stack.api.url, method, path, body, ADMIN);
    assert.equal((await admin('POST', '/api/projects', { name: 'sqlvalues', author: 'Ada' })).status, 201);
    const datasource = `service=${db.service} table="survey"."sites" (geom) sql=${FILTER}`;
    const added = await admin('POST', '/api/projects/sqlvalues/layers', { type: 'vector', name: 'sites', datasource });
    assert.equal(added.status, 201, JSON.stringify(added.body));
  });

  after(async () => {
    await stack?.stop();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The distinct values PostgreSQL holds of `column` under the layer's filter, as JavaScript values. */
  async function distinctRows(column: string): Promise<Array<string | number>> {
    const rows = await db.sql<{ value: string | number | boolean }>(
      `SELECT DISTINCT ${column} AS value FROM survey.sites WHERE ${column} IS NOT NULL AND (${FILTER})`,
    );
    return rows.map(({ value }) =>
      typeof value === 'boolean' ? Number(value) : Number.isNaN(Number(value)) ? value : Number(value),
    );
  }

  for (const [field, type, limit] of [
    ['kind', 'string', 1000],
    ['kind', 'string', 4],
    ['depth', 'real', 1000],
    ['depth', 'real', 7],
    ['id', 'integer', 5],
  ] as const) {
    test(`"${field}" at a limit of ${limit}: PostgreSQL's rows, GDAL's full read, by SQL`, async () => {
      const column = field === 'kind' ? `kind::text` : field;
      const distinct = field === 'kind' ? (await distinctRows(column)).map(String) : await distinctRows(column);
      const expected = owed(type, distinct, limit);
      if (field === 'kind') {
        assert.ok(expected.values.includes('k08') || limit < 10, 'a kind only past row 1,000');
        assert.ok(!distinct.includes('k03'), 'the filter leaves k03 out');
      }
      const answer = await get(`sites/fields/${field}/values?limit=${limit}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body, expected);
      assert.deepEqual(await readFieldValues(source, field, limit, false), expected, "GDAL's full read");
      assert.deepEqual(sqlAnswer(source, field, type, limit), expected, 'the SQL path answers it');
    });
  }

  test('text sorts as JavaScript does, not as the column\'s collation: "Zulu" before "alpha"', async () => {
    const body = (await get('sites/fields/kind/values?limit=3')).body as FieldValues;
    assert.deepEqual(body.values, ['Bravo', 'Zulu', 'alpha']);
    const icu = await db.sql<{ kind: string }>(
      `SELECT DISTINCT kind FROM survey.sites WHERE kind IS NOT NULL ORDER BY kind LIMIT 3`,
    );
    assert.deepEqual(
      icu.map(({ kind }) => kind),
      ['alpha', 'Bravo', 'émile'],
      "the column's own collation would keep others",
    );
  });

  test('a boolean column gives 0 and 1, typed boolean, by SQL as by the full read', async () => {
    const answer = await get('sites/fields/open/values');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(await distinctRows('open').then((values) => values.sort(jsOrder)), [0, 1]);
    assert.deepEqual(answer.body, { type: 'boolean', values: [0, 1], truncated: false });
    assert.deepEqual(await readFieldValues(source, 'open', 10, false), answer.body);
    assert.deepEqual(sqlAnswer(source, 'open', 'boolean', 10), answer.body);
  });

  test('a JSON column, which SQL cannot group, is read whole by GDAL', async () => {
    assert.equal(sqlAnswer(source, 'tags', 'string', 10), undefined);
    const answer = await get('sites/fields/tags/values');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(
      (answer.body as FieldValues).values,
      [0, 1, 2, 3].map((n) => `{"n" : ${n}}`),
    );
    assert.deepEqual(answer.body, await readFieldValues(source, 'tags', 1000, false));
  });

  test('an unknown field is 404 field_not_found, before any SQL', async () => {
    const answer = await get('sites/fields/colour/values');
    assert.equal(answer.status, 404);
    assert.equal((answer.body as { code: string }).code, 'field_not_found');
  });

  test('a GeoPackage answers by SQL as its full read does', async () => {
    const gpkg = join(dir, 'places.gpkg');
    writePoints(gpkg, 1200, classedPoint);
    const file: GdalSource = { kind: 'file', gdalPath: gpkg, layerName: 'places', drivers: ['GPKG'] };
    for (const sql of [
      'ALTER TABLE places ADD COLUMN label TEXT COLLATE NOCASE',
      'UPDATE places SET label = CASE WHEN fid % 2 = 0 THEN upper(kind) ELSE kind END',
    ])
      execFileSync('ogrinfo', ['-q', gpkg, '-sql', sql]);
    for (const [field, type, limit] of [
      ['kind', 'string', 5],
      ['kind', 'string', 100],
      ['label', 'string', 30],
      ['height', 'real', 10],
      ['fid', 'integer', 3],
    ] as const) {
      const whole = await readFieldValues(file, field, limit, false);
      assert.deepEqual(sqlAnswer(file, field, type, limit), whole, `${field} at ${limit}`);
      assert.deepEqual(await readFieldValues(file, field, limit), whole);
    }
    const labels = (await readFieldValues(file, 'label', 30)).values;
    assert.ok(labels.includes('K01') && labels.includes('k01'), 'a NOCASE column keeps k01 and K01 apart');
  });
});
