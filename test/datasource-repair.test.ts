import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, differingPixels, type Image, pixelsOf } from './support/png.js';
import { ows } from './support/qgis.js';
import { runPyqgis, TEST_QGIS } from './support/qgis-runtime.js';
import { type Stack, startStack } from './support/stack.js';

const PROJECT = 'repair';
const LAYER = `/api/projects/${PROJECT}/layers/parcels`;

/** A GeoPackage whose polygons have a field "other" but no "name". */
function withoutName(path: string): void {
  const dataset = gdal.open(path, 'w', 'GPKG');
  const layer = dataset.layers.create('polygons', gdal.SpatialReference.fromEPSG(4326), gdal.wkbMultiPolygon);
  layer.fields.add(new gdal.FieldDefn('other', gdal.OFTString));
  const feature = new gdal.Feature(layer);
  feature.setGeometry(gdal.Geometry.fromWKT('MULTIPOLYGON(((1 44,3 44,3 46,1 46,1 44)))'));
  feature.fields.set('other', 'x');
  layer.features.add(feature);
  dataset.close();
}

describe("a layer's datasource repaired in place, as QGIS's Change Data Source does", () => {
  let stack: Stack;
  let data: Fixtures;
  let map: string;
  let oldPath: string;
  let newPath: string;
  let drawn: Image;
  let written: string;

  const getMap = async (): Promise<Image> => {
    const response = await ows(stack.qgis, map, {
      SERVICE: 'WMS',
      VERSION: '1.3.0',
      REQUEST: 'GetMap',
      LAYERS: 'parcels',
      STYLES: '',
      CRS: 'EPSG:4326',
      BBOX: '43,0,47,4',
      WIDTH: '200',
      HEIGHT: '200',
      FORMAT: 'image/png',
      TRANSPARENT: 'TRUE',
    });
    const body = Buffer.from(await response.arrayBuffer());
    assert.match(response.headers.get('content-type') ?? '', /^image\/png/, body.toString('utf8').slice(0, 300));
    return decodePng(body);
  };

  const patch = (body: unknown, query = '') => stack.call('PATCH', `${LAYER}${query}`, body);
  const check = async () =>
    (
      (await stack.call('GET', `/api/projects/${PROJECT}/check`)).body as {
        layers: Array<{ name: string; status: string; findings: Array<{ kind: string; message: string }> }>;
      }
    ).layers[0];

  /** The kinds of the layer's findings: a font the release's labels name may be missing, which says nothing of the source. */
  const findingKinds = async (): Promise<string[]> => ((await check())?.findings ?? []).map((finding) => finding.kind);

  before(async () => {
    data = makeFixtures();
    stack = await startStack();
    oldPath = join(data.dir, 'old', 'parcels.gpkg');
    newPath = join(data.dir, 'moved', 'parcels.gpkg');
    for (const dir of ['old', 'moved']) mkdirSync(join(data.dir, dir));
    copyFileSync(data.geopackage, oldPath);
    withoutName(join(data.dir, 'unnamed.gpkg'));
    const qgs = join(data.dir, 'styled.qgs');
    runPyqgis(TEST_QGIS, 'styled_project.py', qgs, oldPath);
    const response = await fetch(`${stack.api.url}/api/projects/${PROJECT}/archive`, {
      method: 'PUT',
      headers: { 'content-type': 'application/xml' },
      body: readFileSync(qgs),
    });
    assert.equal(response.status, 201, await response.text());
    map =
      stack.storage.kind === 'filesystem'
        ? join(stack.projectsDir, PROJECT, `${PROJECT}.qgs`)
        : `postgresql:?service=${stack.storage.config.psqlService}&schema=public&project=${PROJECT}`;
    drawn = await getMap();
    written = await stack.storage.projectXml(PROJECT);
  });
  after(async () => {
    await stack?.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('draws the layer in its style, labels included, before its data moves', () => {
    assert.ok(pixelsOf(drawn, [255, 0, 0]) > 1000, 'the category of "polygons-0" is red');
    assert.ok(written.includes(oldPath));
  });

  it('reports the moved layer broken, pointing at the repair', async () => {
    renameSync(oldPath, newPath);
    const layer = await check();
    assert.equal(layer?.status, 'broken');
    const messages = layer?.findings.map((finding) => finding.message).join('\n') ?? '';
    assert.match(messages, /repair it with PATCH \/api\/projects\/repair\/layers\/parcels \{"datasource"/);
  });

  it('refuses a source of another geometry, or without the fields the style and labels read', async () => {
    const lines = await patch({ datasource: `${data.geopackage}|layername=lines` });
    assert.equal(lines.status, 422, JSON.stringify(lines.body));
    assert.match((lines.body as { error: string }).error, /Polygon geometries .* Line geometries/);
    const unnamed = await patch({ datasource: `${join(data.dir, 'unnamed.gpkg')}|layername=polygons` });
    assert.equal(unnamed.status, 422, JSON.stringify(unnamed.body));
    assert.match((unnamed.body as { error: string }).error, /no field "name", which layer "parcels" uses/);
    assert.equal((unnamed.body as { code: string }).code, 'fields_missing');
    const gone = await patch({ datasource: join(data.dir, 'nowhere.gpkg') });
    assert.equal(gone.status, 422, JSON.stringify(gone.body));
    assert.equal(
      (await stack.call('PATCH', `/api/projects/${PROJECT}/layers/missing`, { datasource: newPath })).status,
      404,
    );
    assert.equal(await stack.storage.projectXml(PROJECT), written);
  });

  it('repairs it: QGIS Server draws it again as before, the rest of the project unchanged', async () => {
    const reply = await patch({ datasource: `${newPath}|layername=polygons` });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal((reply.body as { name: string }).name, 'parcels');
    assert.deepEqual(
      (await findingKinds()).filter((kind) => kind !== 'font'),
      [],
    );
    assert.equal(differingPixels(await getMap(), drawn), 0);
    assert.equal(await stack.storage.projectXml(PROJECT), written.replaceAll(oldPath, newPath));
  });

  it('takes a source without the fields with ?force=true', async () => {
    const datasource = `${join(data.dir, 'unnamed.gpkg')}|layername=polygons`;
    const reply = await patch({ datasource }, '?force=true');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.ok((await stack.storage.projectXml(PROJECT)).includes(datasource));
    assert.deepEqual(
      (await findingKinds()).filter((kind) => kind !== 'font'),
      [],
    );
  });
});
