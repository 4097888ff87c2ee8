/**
 * Styles of projects stored in PostgreSQL, through two Steward replicas on one database, each with
 * a projects folder and a QGIS Server of its own: what one replica stores, the other lists, serves,
 * applies, draws (the same pixels), refuses to create twice and deletes, and nothing of it is kept
 * in either folder.
 */
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { type ApiProcess } from './support/api-process.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, differingPixels, type Image, pixelsOf } from './support/png.js';
import { labelledPointQml, squareSvg, stylePackage, svgMarkerQml } from './support/point-style.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type Replica, type Replicas, startReplicas } from './support/replicas.js';
import { fillStyle, polygonLayer } from './support/write-bodies.js';

const SCHEMA = 'replicated';
const PROJECT = 'shared';
const FONT = 'DejaVu Sans';
const SVG_COLOUR = [0, 200, 0];
const PNG_COLOUR = [200, 0, 200];
const QML_COLOUR = [230, 120, 0];
const FILL_COLOUR = [0, 90, 200];

/** A PNG of 16 × 16 pixels, all opaque `colour`, written by GDAL. */
function solidPng(colour: readonly number[]): Buffer {
  const size = 16;
  const memory = gdal.open('memory', 'w', 'MEM', size, size, 4, gdal.GDT_Byte);
  [...colour, 255].forEach((value, band) => {
    memory.bands.get(band + 1).pixels.write(0, 0, size, size, new Uint8Array(size * size).fill(value));
  });
  const path = '/vsimem/steward-solid.png';
  gdal.drivers.get('PNG').createCopy(path, memory).close();
  memory.close();
  return gdal.vsimem.release(path);
}

/** A point style drawing each point as a marker of 10 mm: `symbolLayer` is its `<layer>`'s class and options. */
function markerQml(className: string, options: Record<string, string>): string {
  const entries = Object.entries({ size: '10', size_unit: 'MM', ...options });
  return labelledPointQml(
    `<layer class="${className}" enabled="1" locked="0" pass="0"><Option type="Map">
      ${entries.map(([name, value]) => `<Option type="QString" name="${name}" value="${value}"/>`).join('\n')}
     </Option></layer>`,
    FONT,
  );
}

const path = (rest = ''): string => `/api/projects/${PROJECT}${rest}?schema=${SCHEMA}`;

async function expectStatus(api: ApiProcess, status: number, method: string, rest: string, body?: unknown) {
  const reply = await api.call(method, path(rest), body);
  assert.equal(reply.status, status, `${method} ${rest} through ${api.url}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}

async function put(api: ApiProcess, style: string, kind: 'qml' | 'package', body: string | Buffer): Promise<number> {
  const response = await fetch(`${api.url}${path(`/styles/${style}/${kind}`)}`, {
    method: 'PUT',
    headers: { 'content-type': kind === 'qml' ? 'application/xml' : 'application/zip' },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  assert.ok(response.status < 300, `PUT ${style}/${kind} through ${api.url}: ${await response.text()}`);
  return response.status;
}

async function text(api: ApiProcess, rest: string): Promise<string> {
  const response = await fetch(`${api.url}${path(rest)}`);
  assert.equal(response.status, 200, `GET ${rest} through ${api.url}`);
  return response.text();
}

/** The layer as the replica's QGIS Server draws it. */
async function drawn(api: ApiProcess, layer: string): Promise<Image> {
  const response = await fetch(`${api.url}${path(`/layers/${layer}/map`)}`);
  assert.equal(response.headers.get('content-type'), 'image/png', `the map of ${layer} through ${api.url}`);
  return decodePng(Buffer.from(await response.arrayBuffer()));
}

/** Every file under `dir`, as paths below it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}

describe('styles of a database project through two replicas with folders of their own', () => {
  let db: TestDatabase;
  let data: Fixtures;
  let replicas: Replicas;
  let a: Replica;
  let b: Replica;

  before(async () => {
    db = await startTestDatabase();
    data = makeFixtures();
    replicas = await startReplicas(db, 2);
    [a, b] = replicas.list as [Replica, Replica];
    await a.api.call('POST', '/api/projects/', { name: PROJECT, author: 'test', schema: SCHEMA });
    const points = { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` };
    await expectStatus(a.api, 201, 'POST', '/layers', points);
    await expectStatus(a.api, 201, 'POST', '/layers', polygonLayer('polygons', data.geopackage));
  });
  after(async () => {
    await replicas?.stop();
    await db?.stop();
    if (data) rmSync(data.dir, { recursive: true, force: true });
  });

  it('lists and serves through B the styles created through A, as A does', async () => {
    await expectStatus(a.api, 201, 'POST', '/styles', fillStyle('fill', FILL_COLOUR.join(',')));
    const orange = markerQml('SimpleMarker', {
      name: 'square',
      color: `${QML_COLOUR.join(',')},255`,
      outline_style: 'no',
    });
    assert.equal(await put(a.api, 'square', 'qml', orange), 201);
    const tree = stylePackage({
      'tree.qml': svgMarkerQml('/home/me/tree.svg', FONT),
      'tree.svg': squareSvg(SVG_COLOUR),
    });
    assert.equal(await put(a.api, 'tree', 'package', tree), 201);
    const photo = stylePackage({
      'photo/photo.qml': markerQml('RasterMarker', { imageFile: 'C:\\pictures\\photo.png', fixedAspectRatio: '0' }),
      'photo/photo.png': solidPng(PNG_COLOUR),
    });
    assert.equal(await put(a.api, 'photo', 'package', photo), 201);

    const names = ['fill', 'photo', 'square', 'tree'];
    for (const replica of [a, b]) assert.deepEqual(await expectStatus(replica.api, 200, 'GET', '/styles'), names);
    for (const style of names) {
      assert.equal(await text(b.api, `/styles/${style}`), await text(a.api, `/styles/${style}`), style);
      assert.equal(await text(b.api, `/styles/${style}/qml`), await text(a.api, `/styles/${style}/qml`), style);
    }
    const fill = (await expectStatus(b.api, 200, 'GET', '/styles/fill')) as { symbology: { type: string } };
    assert.equal(fill.symbology.type, 'single_symbol', 'a style made from JSON is described as JSON');
  });

  it('has both QGIS Servers draw, pixel for pixel, a style made current through B', async () => {
    const cases: Array<[layer: string, style: string, colour: number[]]> = [
      ['points', 'tree', SVG_COLOUR],
      ['points', 'photo', PNG_COLOUR],
      ['points', 'square', QML_COLOUR],
      ['polygons', 'fill', FILL_COLOUR],
    ];
    for (const [layer, style, colour] of cases) {
      await expectStatus(b.api, 200, 'POST', `/layers/${layer}/style`, { name: style, current: true });
      const info = (await expectStatus(a.api, 200, 'GET', `/layers/${layer}`)) as { current_style: string };
      assert.equal(info.current_style, style, 'A reads the current style B set');
      const [throughB, throughA] = [await drawn(b.api, layer), await drawn(a.api, layer)];
      assert.ok(pixelsOf(throughB, colour) > 1000, `${style} is drawn in its colour (${pixelsOf(throughB, colour)})`);
      assert.equal(differingPixels(throughB, throughA), 0, `A's QGIS Server draws ${style} as B's does`);
    }
  });

  it('keeps the styles in the database, and nothing of them in either folder', async () => {
    const rows = await db.sql<{ name: string }>(
      `SELECT name FROM ${SCHEMA}.steward_styles WHERE project = $1 ORDER BY name`,
      [PROJECT],
    );
    assert.deepEqual(
      rows.map((row) => row.name),
      ['fill', 'photo', 'square', 'tree'],
    );
    for (const replica of [a, b]) assert.deepEqual(filesUnder(replica.projectsDir), [], replica.projectsDir);
  });

  it('answers a create through B of the style A created with 409, a replacement with 200', async () => {
    const again = await b.api.call('POST', path('/styles'), fillStyle('fill', '#ff0000'));
    assert.equal(again.status, 409, JSON.stringify(again.body));
    assert.match((again.body as { error: string }).error, /already has a style "fill"/);
    const named = await b.api.call('POST', path('/styles/square'), fillStyle('square', '#ff0000'));
    assert.equal(named.status, 409, JSON.stringify(named.body));
    const yellow = markerQml('SimpleMarker', { name: 'square', color: '255,255,0,255', outline_style: 'no' });
    assert.equal(await put(b.api, 'square', 'qml', yellow), 200);
    assert.equal(await text(a.api, '/styles/square/qml'), yellow);
    const [throughA, throughB] = [await drawn(a.api, 'points'), await drawn(b.api, 'points')];
    assert.ok(pixelsOf(throughA, [255, 255, 0]) > 1000, 'A draws the replacement made through B');
    assert.equal(differingPixels(throughA, throughB), 0);
  });

  it('shares the default style of each geometry', async () => {
    await expectStatus(a.api, 200, 'POST', '/styles/default', { name: 'tree', geometry: 'point' });
    const defaults = { point: 'tree', line: 'default', polygon: 'default' };
    assert.deepEqual(await expectStatus(b.api, 200, 'GET', '/styles/default'), defaults);
    const more = { type: 'vector', name: 'more', datasource: `${data.geopackage}|layername=points` };
    await expectStatus(b.api, 201, 'POST', '/layers', more);
    assert.ok(pixelsOf(await drawn(b.api, 'more'), SVG_COLOUR) > 1000, "a layer added through B draws A's default");
    await expectStatus(b.api, 200, 'DELETE', '/layers/more');
    await expectStatus(b.api, 200, 'POST', '/styles/default', { name: 'default', geometry: 'point' });
  });

  it('deletes through B a style that A then no longer has', async () => {
    await expectStatus(b.api, 200, 'POST', '/layers/points/style', { name: 'default', current: true });
    await expectStatus(b.api, 200, 'DELETE', '/styles/tree');
    assert.deepEqual(await expectStatus(a.api, 200, 'GET', '/styles'), ['fill', 'photo', 'square']);
    await expectStatus(a.api, 404, 'GET', '/styles/tree');
    const layer = (await expectStatus(a.api, 200, 'GET', '/layers/points')) as { styles: string[] };
    assert.ok(!layer.styles.includes('tree'), 'the layers no longer have it in their style manager');
  });

  it("deletes the project's styles with the project", async () => {
    await expectStatus(b.api, 200, 'DELETE', '');
    const rows = await db.sql<{ count: string }>(`SELECT count(*) FROM ${SCHEMA}.steward_styles`);
    assert.equal(rows[0]?.count, '0');
    await expectStatus(a.api, 404, 'GET', '/styles');
  });
});
