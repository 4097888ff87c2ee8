import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import {
  CONTROL_CHARACTER,
  DatasourceUriError,
  DatasourceUriKeyError,
  formatDatasourceUri,
  maskPasswords,
  parseDatasourceUri,
} from './datasource-uri.js';

describe('the datasource URI grammar of QGIS', () => {
  it('reads the connection, the table with its schema and geometry column, and the filter', () => {
    const uri = parseDatasourceUri(
      `dbname='gis' host=db.example port=5432 user='reader' password='s3cr\\'et' sslmode=disable key='id' ` +
        `srid=2154 type=MultiPolygon checkPrimaryKeyUnicity='1' table="public"."parcels" (geom) sql="area" > 10 AND name = 'x y'`,
      'postgres',
    );
    assert.deepEqual(uri, {
      entries: {
        dbname: 'gis',
        host: 'db.example',
        port: '5432',
        user: 'reader',
        password: "s3cr'et",
        sslmode: 'disable',
        key: 'id',
        srid: '2154',
        type: 'MultiPolygon',
        checkPrimaryKeyUnicity: '1',
      },
      schema: 'public',
      table: 'parcels',
      geometryColumn: 'geom',
      sql: `"area" > 10 AND name = 'x y'`,
    });
  });

  it('takes quoted identifiers with escapes, a table without schema, and username as user', () => {
    const uri = parseDatasourceUri(`service='my svc' username=me table="odd\\"name" ( the \\) geom )`, 'postgres');
    assert.equal(uri.entries.service, 'my svc');
    assert.equal(uri.entries.user, 'me');
    assert.equal(uri.schema, undefined);
    assert.equal(uri.table, 'odd"name');
    assert.equal(uri.geometryColumn, ' the ) geom ');
  });

  it('writes back what it reads, in the order QGIS writes it', () => {
    const text =
      `dbname='gis' service='main' user='a\\'b' password='p\\\\w' key='id' srid=4326 type=Point ` +
      `table="s"."t" (g\\)x) sql=id > 3`;
    const uri = parseDatasourceUri(text, 'postgres');
    assert.deepEqual(parseDatasourceUri(formatDatasourceUri(uri), 'postgres'), uri);
    assert.equal(
      formatDatasourceUri(uri),
      `dbname='gis' service='main' user='a\\'b' password='p\\\\w' key='id' srid=4326 type=Point table="s"."t" (g\\)x) sql=id > 3`,
    );
  });

  it('refuses keys the provider does not read, keys given twice and malformed values as key errors', () => {
    for (const text of [
      `service='x' table="s"."t" (g) unknown=1`,
      `service='x' service='y' table="s"."t" (g)`,
      `service='x' table="s"."t" (g) table="s"."u" (g)`,
      `service='x' port=abc table="s"."t" (g)`,
      `service='x' sslmode=sometimes table="s"."t" (g)`,
      `dbname='/data/x.sqlite' host=h table="t" (g)`,
    ]) {
      const provider = text.includes('.sqlite') ? 'spatialite' : 'postgres';
      assert.throws(() => parseDatasourceUri(text, provider), DatasourceUriKeyError, text);
    }
  });

  it('refuses text that is not key=value pairs, an open quote or parenthesis, and a source without table', () => {
    for (const text of [
      `service='x' table="s"."t" (g) stray`,
      `service='x table="s"."t" (g)`,
      `service='x' table="s"."t" (g`,
      `service='x'`,
      `=x table="t"`,
    ]) {
      assert.throws(
        () => parseDatasourceUri(text, 'postgres'),
        (error: unknown) => error instanceof DatasourceUriError && !(error instanceof DatasourceUriKeyError),
        text,
      );
    }
  });

  it('masks passwords of every form in any text', () => {
    assert.equal(
      maskPasswords(`GDAL cannot open PG:dbname='gis' password='a b\\'c' user=x: failed`),
      `GDAL cannot open PG:dbname='gis' password='***' user=x: failed`,
    );
    assert.equal(maskPasswords('host=h password=plain user=u'), `host=h password='***' user=u`);
    assert.equal(maskPasswords('password=x&url=http://u:secret@host/wms'), `password='***'&url=http://u:***@host/wms`);
    assert.equal(maskPasswords('/data/roads.gpkg|layername=roads'), '/data/roads.gpkg|layername=roads');
  });

  it('knows control characters', () => {
    assert.ok(CONTROL_CHARACTER.test('/data/a\u0000.tif'));
    assert.ok(CONTROL_CHARACTER.test('/data/a\n.tif'));
    assert.ok(!CONTROL_CHARACTER.test('/data/é.tif'));
  });
});
