/**
 * `GET .../layers/{layer}/fields` on a real Steward: a GeoPackage layer WFS does not publish, with
 * a field every feature leaves null, and a PostGIS table, each listed as `ogrinfo -so` lists the
 * source's fields and types, then the expression field the project gives the layer; the refusals;
 * a role hiding an attribute. And a QML upload naming fields a layer having the style lacks,
 * refused with their names unless forced.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';
import { stylePackage } from './support/point-style.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type Stack, startStack } from './support/stack.js';
import { selectedStorage } from './support/test-storage.js';

const ADMIN = 'layer-fields-administrator';

interface Field {
  name: string;
  type: string;
  type_name: string;
  expression?: string;
}

/**
 * A GeoPackage layer `survey` of two points, a field of each type GeoPackage holds, `remark` null
 * in both, and `open`, a column declared BOOLEAN (GDAL's Integer of subtype Boolean).
 */
function writeSurvey(path: string): void {
  const dataset = gdal.open(path, 'w', 'GPKG');
  try {
    const layer = dataset.layers.create('survey', gdal.SpatialReference.fromEPSG(4326), gdal.wkbPoint);
    const types: Array<[string, string]> = [
      ['kind', gdal.OFTString],
      ['count', gdal.OFTInteger],
      ['big', gdal.OFTInteger64],
      ['height', gdal.OFTReal],
      ['seen', gdal.OFTDate],
      ['stamp', gdal.OFTDateTime],
      ['blob', gdal.OFTBinary],
      ['remark', gdal.OFTString],
    ];
    for (const [name, type] of types) layer.fields.add(new gdal.FieldDefn(name, type));
    for (const [index, kind] of ['north', 'south'].entries()) {
      const feature = new gdal.Feature(layer);
      feature.setGeometry(gdal.Geometry.fromWKT(`POINT(${1 + index} 45)`));
      feature.fields.set({ kind, count: index, big: 2 ** 40, height: 1.5 });
      layer.features.add(feature);
    }
  } finally {
    dataset.close();
  }
  for (const sql of ['ALTER TABLE survey ADD COLUMN open BOOLEAN', "UPDATE survey SET open = (kind = 'north')"])
    execFileSync('ogrinfo', ['-q', path, '-sql', sql]);
}

/**
 * The fields `ogrinfo -so` lists of a layer: its FID column (GDAL's ids, 64-bit) then each field
 * with OGR's name of its type and the subtype it writes in brackets (`Integer(Boolean)`).
 */
function ogrinfoFields(source: string, layer: string, env = process.env): Array<{ name: string; type_name: string }> {
  const text = execFileSync('ogrinfo', ['-so', '-ro', source, layer], { encoding: 'utf8', env });
  const fid = /^FID Column = (.+)$/m.exec(text)?.[1];
  const fields = [...text.matchAll(/^(\S[^:\n]*): (\w+(?:\(\w+\))?) \(\d+\.\d+\)$/gm)].map(
    ([, name = '', type = '']) => ({
      name,
      type_name: type,
    }),
  );
  return [...(fid ? [{ name: fid, type_name: 'Integer64' }] : []), ...fields];
}

/** A categorized point style classing by `attr`, labelled by the field `label`, as QGIS Desktop saves it. */
function categorizedQml(attr: string, label: string, expressionFields = ''): string {
  return `<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis version="3.22.16-Białowieża" styleCategories="AllStyleCategories">
 <renderer-v2 type="categorizedSymbol" attr="${attr}" symbollevels="0" enableorderby="0" forceraster="0">
  <categories>
   <category symbol="0" value="north" label="north" render="true"/>
  </categories>
  <symbols>
   <symbol type="marker" name="0" alpha="1" clip_to_extent="1" force_rhr="0">
    <layer class="SimpleMarker" enabled="1" locked="0" pass="0">
     <Option type="Map"><Option type="QString" name="color" value="255,0,0,255"/></Option>
     <prop k="color" v="255,0,0,255"/>
    </layer>
   </symbol>
  </symbols>
 </renderer-v2>
 <labeling type="simple">
  <settings calloutType="simple">
   <text-style fontFamily="DejaVu Sans" fontSize="10" fieldName="${label}" isExpression="0" textColor="0,0,0,255"/>
  </settings>
 </labeling>
 <expressionfields>${expressionFields}</expressionfields>
 <layerGeometryType>0</layerGeometryType>
</qgis>
`;
}

/** An expression field of `kind` as QGIS saves it (a QString, QMetaType 10). */
function kindField(name: string, call: string): string {
  const expression = `${call}(&quot;kind&quot;)`;
  return `<field name="${name}" expression="${expression}" type="10" typeName="string" length="0" precision="0" subType="0" comment=""/>`;
}

const LOUD = kindField('loud', 'upper');

describe(`a vector layer's fields, as GDAL reads its source's definition (${selectedStorage()} storage)`, () => {
  let stack: Stack;
  let db: TestDatabase;
  let dir: string;
  let gpkg: string;
  const call = (method: string, path: string, body?: unknown, token = ADMIN) =>
    apiCall(stack.api.url, method, `/api/projects/fields${path}`, body, token);
  const fieldsOf = async (layer: string, token = ADMIN): Promise<Field[]> => {
    const answer = await call('GET', `/layers/${layer}/fields`, undefined, token);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    return answer.body as Field[];
  };
  const putQml = (style: string, qml: string, query = '') =>
    fetch(`${stack.api.url}/api/projects/fields/styles/${style}/qml${query}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/xml', authorization: `Bearer ${ADMIN}` },
      body: qml,
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'steward-layer-fields-'));
    gpkg = join(dir, 'survey.gpkg');
    writeSurvey(gpkg);
    const fixtures = makeFixtures();
    copyFileSync(fixtures.rgbTiff, join(dir, 'rgb.tif'));
    rmSync(fixtures.dir, { recursive: true, force: true });
    db = await startTestDatabase();
    await db.sql(`
      CREATE TABLE public.wells (
        id serial PRIMARY KEY, name varchar(40), depth numeric(6, 2), litres bigint, dry boolean,
        drilled date, checked timestamp, photo bytea, geom geometry(Point, 4326));
      INSERT INTO public.wells (name, geom) VALUES ('w1', ST_GeomFromText('POINT(2 45)', 4326));
      GRANT SELECT ON public.wells TO ${db.user};
    `);
    // Projects stored in PostgreSQL go to the database of the table: one service file names both.
    const storage = selectedStorage() === 'postgresql' ? { psqlService: db.service } : {};
    stack = await startStack({ apiToken: ADMIN, dataRoots: [dir], ...storage });
    assert.equal(
      (await apiCall(stack.api.url, 'POST', '/api/projects', { name: 'fields', author: 'Ada' }, ADMIN)).status,
      201,
    );
    const layers = [
      { type: 'vector', name: 'survey', datasource: `${gpkg}|layername=survey` },
      { type: 'vector', name: 'wells', datasource: `service=${db.service} table="public"."wells" (geom)` },
      { type: 'raster', name: 'rgb', datasource: join(dir, 'rgb.tif') },
    ];
    for (const layer of layers) {
      const added = await call('POST', '/layers', layer);
      assert.equal(added.status, 201, JSON.stringify(added.body));
    }
  });

  after(async () => {
    await stack?.stop();
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("lists a GeoPackage layer's fields as ogrinfo does, the all-null one too, BOOLEAN as boolean, though WFS does not publish it", async () => {
    const features = await call('GET', '/layers/survey/features');
    assert.equal(features.status, 409, 'WFS does not publish the layer');
    const fields = await fieldsOf('survey');
    const expected = ogrinfoFields(gpkg, 'survey');
    assert.equal(expected.length, 10, `ogrinfo lists fid and 9 fields: ${JSON.stringify(expected)}`);
    assert.deepEqual(expected.at(-1), { name: 'open', type_name: 'Integer(Boolean)' });
    assert.deepEqual(
      fields.map(({ name, type_name }) => ({ name, type_name })),
      expected,
    );
    assert.deepEqual(Object.fromEntries(fields.map((field) => [field.name, field.type])), {
      fid: 'integer',
      kind: 'string',
      count: 'integer',
      big: 'integer',
      height: 'real',
      seen: 'date',
      stamp: 'datetime',
      blob: 'binary',
      remark: 'string',
      open: 'boolean',
    });
  });

  test('lists a PostGIS table as ogrinfo reads it through the same service', async () => {
    const fields = await fieldsOf('wells');
    const expected = ogrinfoFields(`PG:service=${db.service}`, 'wells', {
      ...process.env,
      PGSERVICEFILE: db.serviceFile,
    });
    assert.equal(expected[0]?.name, 'id', 'the primary key is the FID column');
    assert.deepEqual(
      fields.map(({ name, type_name }) => ({ name, type_name })),
      expected,
    );
    const types = Object.fromEntries(fields.map((field) => [field.name, field.type]));
    assert.deepEqual(types, {
      id: 'integer',
      name: 'string',
      depth: 'real',
      litres: 'integer',
      dry: 'boolean',
      drilled: 'date',
      checked: 'datetime',
      photo: 'binary',
    });
  });

  test('lists the expression field the project gives the layer after its source fields', async () => {
    assert.equal((await putQml('loud', categorizedQml('loud', 'kind', LOUD))).status, 201);
    const applied = await call('POST', '/layers/survey/style', { name: 'loud', current: true });
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    const fields = await fieldsOf('survey');
    assert.deepEqual(fields.at(-1), { name: 'loud', type: 'string', type_name: 'string', expression: 'upper("kind")' });
    assert.equal(fields.length, 11);
  });

  test('refuses a raster, an unknown layer and a source no longer readable', async () => {
    const raster = await call('GET', '/layers/rgb/fields');
    assert.equal(raster.status, 422, JSON.stringify(raster.body));
    assert.match((raster.body as { error: string }).error, /raster/);
    const unknown = await call('GET', '/layers/nowhere/fields');
    assert.equal(unknown.status, 404);
    assert.equal((unknown.body as { code: string }).code, 'layer_not_found');
    const copy = join(dir, 'gone.gpkg');
    copyFileSync(gpkg, copy);
    const gone = { type: 'vector', name: 'gone', datasource: `${copy}|layername=survey` };
    assert.equal((await call('POST', '/layers', gone)).status, 201);
    writeFileSync(copy, 'not a GeoPackage');
    const unreadable = await call('GET', '/layers/gone/fields');
    assert.equal(unreadable.status, 422, JSON.stringify(unreadable.body));
    assert.equal((unreadable.body as { code: string }).code, 'datasource_unreadable');
  });

  test("leaves out the attributes an identity's roles hide, and the layer it may not read", async () => {
    const role = {
      projects: {
        fields: {
          access: 'read',
          layers: { survey: { hidden_attributes: ['remark', 'big'] }, wells: { read: false } },
        },
      },
    };
    assert.equal((await apiCall(stack.api.url, 'PUT', '/api/roles/surveyor', role, ADMIN)).status, 201);
    const issued = await apiCall(
      stack.api.url,
      'POST',
      '/api/tokens',
      { name: 'surveyor', roles: ['surveyor'] },
      ADMIN,
    );
    const token = (issued.body as { token: string }).token;
    const all = (await fieldsOf('survey')).map((field) => field.name);
    const seen = (await fieldsOf('survey', token)).map((field) => field.name);
    assert.deepEqual(
      seen,
      all.filter((name) => name !== 'remark' && name !== 'big'),
    );
    assert.equal((await call('GET', '/layers/wells/fields', undefined, token)).status, 404);
  });

  test('refuses a QML naming fields a layer having it lacks, with their names, unless forced', async () => {
    assert.equal((await putQml('by-kind', categorizedQml('kind', 'kind'))).status, 201);
    assert.equal((await call('POST', '/layers/survey/style', { name: 'by-kind' })).status, 200);
    const stored = await (
      await fetch(`${stack.api.url}/api/projects/fields/styles/by-kind/qml`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      })
    ).text();

    const refused = await putQml('by-kind', categorizedQml('colour', 'owner'));
    assert.equal(refused.status, 422);
    const { error, code } = (await refused.json()) as { error: string; code: string };
    assert.equal(code, 'fields_missing');
    assert.match(error, /layer "survey" has no field "colour", "owner"/);
    assert.match(error, /force=true/);
    const packaged = await fetch(`${stack.api.url}/api/projects/fields/styles/by-kind/package`, {
      method: 'PUT',
      headers: { 'content-type': 'application/zip', authorization: `Bearer ${ADMIN}` },
      body: new Uint8Array(stylePackage({ 'by-kind.qml': categorizedQml('colour', 'kind') })),
    });
    assert.equal(packaged.status, 422, 'a package is checked alike');
    const kept = await (
      await fetch(`${stack.api.url}/api/projects/fields/styles/by-kind/qml`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      })
    ).text();
    assert.equal(kept, stored, 'the style refused is left as it was');

    const own = await putQml('by-kind', categorizedQml('quiet', 'kind', kindField('quiet', 'lower')));
    assert.equal(own.status, 200, 'an expression field the QML brings is one the layer gets');
    const forced = await putQml('by-kind', categorizedQml('colour', 'owner'), '?force=true');
    assert.equal(forced.status, 200, await forced.clone().text());
    const now = await (
      await fetch(`${stack.api.url}/api/projects/fields/styles/by-kind/qml`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      })
    ).text();
    assert.match(now, /attr="colour"/);
  });
});
