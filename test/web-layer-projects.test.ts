/**
 * Projects with web layers as the tested release of PyQGIS writes them (an XYZ basemap and a WMS
 * layer of local services, memory, virtual and delimited-text layers), as written, with Windows
 * line endings and from a localized Desktop: read as QGIS reads them (CRS, layer tree, no layer
 * called broken), the same bytes after an edit and its undoing, and QGIS Server's GetCapabilities
 * and GetMap the same before and after.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { type Check } from './support/project-check.js';
import { ows } from './support/qgis.js';
import { runPyqgisAsync, TEST_QGIS } from './support/qgis-runtime.js';
import { type Stack, startStack } from './support/stack.js';
import { xmlDifference } from './support/style-oracle.js';
import { startWebServices, type WebServices } from './support/web-services.js';

interface Read {
  crs: string;
  tree: string[];
  layers: Record<string, { valid: boolean; provider: string; crs: string }>;
}

const GET_MAP = {
  SERVICE: 'WMS',
  VERSION: '1.3.0',
  REQUEST: 'GetMap',
  LAYERS: 'polygons,parcels_sql,wells,world',
  STYLES: '',
  CRS: 'EPSG:3857',
  BBOX: '0,5000000,500000,6000000',
  WIDTH: '64',
  HEIGHT: '64',
  FORMAT: 'image/png',
};

describe(`projects with web layers written by PyQGIS (${TEST_QGIS.name})`, () => {
  let data: Fixtures;
  let web: WebServices;
  let stack: Stack;
  let read: Read;
  let written = '';

  const variants = (): Array<[string, string]> => [
    ['web_written', written],
    ['web_crlf', written.replace(/\n/g, '\r\n')],
    [
      'web_localized',
      written
        .replace(/<map-layer-style-manager current="default">/g, '<map-layer-style-manager current="numatytasis">')
        .replace(/<map-layer-style name="default"\/>/g, '<map-layer-style name="numatytasis"/>'),
    ],
  ];

  function install(name: string, text: string): string {
    const file = join(stack.projectsDir, name, `${name}.qgs`);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
    return file;
  }

  async function ok(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await stack.call(method, path, body);
    assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }

  /** QGIS Server's GetCapabilities and GetMap of the project file. */
  async function served(file: string): Promise<[string, Buffer]> {
    const capabilities = await ows(stack.qgis, file, { SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' });
    assert.equal(capabilities.status, 200);
    const map = await ows(stack.qgis, file, GET_MAP);
    assert.equal(map.status, 200);
    assert.match(map.headers.get('content-type') ?? '', /^image\/png/);
    return [await capabilities.text(), Buffer.from(await map.arrayBuffer())];
  }

  before(async () => {
    data = makeFixtures();
    const csv = join(data.dir, 'wells.csv');
    writeFileSync(csv, 'id,x,y\n1,2,45\n2,3,46\n');
    web = await startWebServices();
    stack = await startStack();
    const scratch = join(stack.projectsDir, 'written');
    mkdirSync(scratch);
    const file = join(scratch, 'written.qgs');
    const printed = await runPyqgisAsync(
      TEST_QGIS,
      'write_web_corpus_project.py',
      file,
      data.geopackage,
      csv,
      web.tileUrl,
      web.wmsUrl,
    );
    read = JSON.parse(printed) as Read;
    written = readFileSync(file, 'utf8');
    rmSync(scratch, { recursive: true, force: true });
    assert.ok(
      Object.values(read.layers).every((layer) => layer.valid),
      printed,
    );
  });
  after(async () => {
    await stack?.stop();
    await web?.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('reads the CRS and the layer tree as QGIS does, and calls no layer broken', async () => {
    for (const [name, text] of variants()) {
      install(name, text);
      const info = (await ok('GET', `/api/projects/${name}`)) as { crs: string };
      assert.equal(info.crs, read.crs, name);
      assert.deepEqual(await ok('GET', `/api/projects/${name}/layers`), read.tree, name);
      for (const layer of Object.keys(read.layers)) {
        const described = (await ok('GET', `/api/projects/${name}/layers/${layer}`)) as { valid: boolean };
        assert.equal(described.valid, true, `${name}: ${layer}`);
      }
      const check = (await ok('GET', `/api/projects/${name}/check`)) as Check;
      assert.deepEqual(
        check.layers.filter((layer) => layer.status !== 'ok'),
        [],
        `${name}: ${JSON.stringify(check)}`,
      );
      assert.equal(check.status, 'ok', name);
    }
  });

  it('adds and removes a layer, and sets a title and back, to the same bytes and the same service', async () => {
    for (const [name, text] of variants()) {
      const file = install(`${name}_edit`, text);
      const before = await served(file);
      assert.ok(decodePng(before[1]).paintedPixels() > 0, `${name}: QGIS Server draws the layers`);
      await ok('POST', `/api/projects/${name}_edit/layers`, {
        type: 'vector',
        name: 'added',
        datasource: `${data.geopackage}|layername=points`,
      });
      const added = readFileSync(file, 'utf8');
      if (name === 'web_crlf') assert.doesNotMatch(added, /[^\r]\n/, 'no bare line feed in a CRLF file');
      await ok('DELETE', `/api/projects/${name}_edit/layers/added`);
      assert.equal(readFileSync(file, 'utf8'), text, `${name}: add and remove`);
      await ok('PATCH', `/api/projects/${name}_edit`, { title: 'Another title' });
      await ok('PATCH', `/api/projects/${name}_edit`, { title: 'Web corpus' });
      assert.equal(readFileSync(file, 'utf8'), text, `${name}: title and back`);
      const after = await served(file);
      // QGIS Server's Qt writes attributes in hash order, which differs between its processes.
      assert.equal(xmlDifference(after[0], before[0]), undefined, `${name}: GetCapabilities`);
      assert.ok(after[1].equals(before[1]), `${name}: GetMap`);
    }
  });
});
