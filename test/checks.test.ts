/**
 * Project checks against real faults: a GeoPackage deleted after its layer was added (then the
 * project refused once QGIS Server reads it again), an SVG marker whose file is removed, a fill
 * image missing, a label font that is not installed, a PostgreSQL table dropped, a user-defined
 * and an unknown CRS, a layer excluded from QGIS Server's WMS. Each shows in the check, through the API and the `steward check` command, and
 * goes away once repaired.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type Check, type Finding } from './support/project-check.js';
import { type Stack, startStack } from './support/stack.js';

const repo = resolve(import.meta.dirname, '..');
const execFileAsync = promisify(execFile);

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><circle cx="5" cy="5" r="4"/></svg>';
const MISSING_FONT = 'Steward Missing Sans';
/** A 1 x 1 grey PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==';

describe('project checks', () => {
  let data: Fixtures;
  let db: TestDatabase;
  let stack: Stack;
  let gpkgCopy = '';
  let svgFile = '';

  const qgsFile = (): string => join(stack.projectsDir, 'alpha', 'alpha.qgs');

  /** Rewrites the `<maplayer>` of `layer` in the .qgs, as QGIS Desktop would save it. */
  function editLayer(layer: string, edit: (xml: string) => string): void {
    const text = readFileSync(qgsFile(), 'utf8');
    const parts = text.split('<maplayer ');
    const at = parts.findIndex((part) => part.includes(`<layername>${layer}</layername>`));
    assert.ok(at > 0, `layer ${layer} is in the project`);
    parts[at] = edit(parts[at] ?? '');
    writeFileSync(qgsFile(), parts.join('<maplayer '));
  }

  async function check(): Promise<Check> {
    const { status, body } = await stack.call('GET', '/api/projects/alpha/check');
    assert.equal(status, 200, JSON.stringify(body));
    return body as Check;
  }

  function layer(result: Check, name: string): { status: string; findings: Finding[] } {
    const found = result.layers.find((each) => each.name === name);
    assert.ok(found, `layer ${name} is checked`);
    return found;
  }

  async function assertAllOk(): Promise<void> {
    const result = await check();
    assert.deepEqual(
      result.layers.filter((each) => each.status !== 'ok'),
      [],
    );
    assert.deepEqual(result.findings, []);
    assert.equal(result.status, 'ok');
  }

  async function steward(...args: string[]): Promise<{ code: number; stdout: string }> {
    try {
      const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
        cwd: repo,
        env: { ...process.env, STEWARD_SERVER_URL: stack.api.url },
      });
      return { code: 0, stdout };
    } catch (error) {
      const failed = error as { code: number; stdout: string };
      return { code: failed.code, stdout: failed.stdout };
    }
  }

  async function createParcels(): Promise<void> {
    await db.sql(`
      CREATE TABLE public.parcels (id serial PRIMARY KEY, name text, geom geometry(MultiPolygon, 4326));
      INSERT INTO public.parcels (name, geom) VALUES ('all', ST_GeomFromText('MULTIPOLYGON(((1 44,3 44,3 46,1 46,1 44)))', 4326));
      GRANT SELECT ON public.parcels TO ${db.user};
    `);
  }

  before(async () => {
    data = makeFixtures();
    db = await startTestDatabase();
    await createParcels();
    stack = await startStack();
    gpkgCopy = join(data.dir, 'own.gpkg');
    copyFileSync(data.geopackage, gpkgCopy);
    svgFile = join(data.dir, 'marker.svg');
    writeFileSync(svgFile, SVG);
    assert.equal((await stack.call('POST', '/api/projects', { name: 'alpha', author: 'checks' })).status, 201);
    const layers = [
      { type: 'vector', name: 'polygons', datasource: `${gpkgCopy}|layername=polygons` },
      { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` },
      { type: 'vector', name: 'lines', datasource: `${data.geopackage}|layername=lines` },
      { type: 'vector', name: 'parcels', datasource: `service=${db.service} table="public"."parcels" (geom)` },
    ];
    for (const each of layers) {
      const added = await stack.call('POST', '/api/projects/alpha/layers', each);
      assert.equal(added.status, 201, JSON.stringify(added.body));
    }
    // As QGIS Desktop saves them: an SVG marker on the points, labels in DejaVu Sans on the lines.
    editLayer('points', (xml) =>
      xml
        .replace('class="SimpleMarker"', 'class="SvgMarker"')
        .replace(/(name="name"[^>]*value=")circle"/, `$1${svgFile}"`)
        .replace('k="name" v="circle"', `k="name" v="${svgFile}"`),
    );
    editLayer('lines', (xml) =>
      xml.replace(
        '</maplayer>',
        `<labeling type="simple"><settings calloutType="simple"><text-style fontFamily="DejaVu Sans" fontSize="10" fieldName="name" fontSizeUnit="Point" textColor="0,0,0,255"/></settings></labeling></maplayer>`,
      ),
    );
  });

  after(async () => {
    await stack.stop();
    await db.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('finds nothing wrong with a sound project, and steward check exits 0', async () => {
    await assertAllOk();
    const { code, stdout } = await steward('check', 'alpha');
    assert.equal(code, 0, stdout);
    assert.match(stdout, /alpha\s+ok/);
  });

  it('reports a GeoPackage deleted after its layer was added, until it is back', async () => {
    renameSync(gpkgCopy, `${gpkgCopy}.away`);
    try {
      const result = await check();
      assert.equal(result.status, 'degraded', 'QGIS Server still serves the copy it loaded');
      const polygons = layer(result, 'polygons');
      assert.equal(polygons.status, 'broken');
      assert.ok(
        polygons.findings.some((finding) => finding.kind === 'datasource'),
        JSON.stringify(polygons),
      );
      assert.equal(layer(result, 'points').status, 'ok');
      const cli = await steward('check', 'alpha');
      assert.notEqual(cli.code, 0, 'steward check fails');
      assert.match(cli.stdout, /polygons.*datasource/);
      writeFileSync(qgsFile(), readFileSync(qgsFile())); // QGIS Server reads a rewritten .qgs again
      const reloaded = await check();
      assert.equal(reloaded.status, 'broken', 'QGIS Server refuses the project it reads again');
      assert.deepEqual(
        reloaded.findings.map(({ kind, message }) => [kind, /^QGIS Server refuses the project: /.test(message)]),
        [['server', true]],
        JSON.stringify(reloaded.findings),
      );
    } finally {
      renameSync(`${gpkgCopy}.away`, gpkgCopy);
    }
    writeFileSync(qgsFile(), readFileSync(qgsFile()));
    await assertAllOk();
  });

  it('reports an SVG marker whose file is removed, until it is back', async () => {
    rmSync(svgFile);
    const result = await check();
    assert.equal(result.status, 'degraded');
    assert.deepEqual(layer(result, 'points'), {
      name: 'points',
      status: 'degraded',
      findings: [{ kind: 'svg', message: `SVG file ${svgFile} is missing` }],
    });
    writeFileSync(svgFile, SVG);
    await assertAllOk();
  });

  it('reports a label font that is not installed, until the label uses an installed one', async () => {
    editLayer('lines', (xml) => xml.replace('fontFamily="DejaVu Sans"', `fontFamily="${MISSING_FONT}"`));
    const result = await check();
    assert.equal(result.status, 'degraded');
    const lines = layer(result, 'lines');
    assert.equal(lines.status, 'degraded');
    assert.deepEqual(
      lines.findings.map((finding) => finding.kind),
      ['font'],
    );
    assert.match(lines.findings[0]?.message ?? '', new RegExp(MISSING_FONT));
    editLayer('lines', (xml) => xml.replace(`fontFamily="${MISSING_FONT}"`, 'fontFamily="DejaVu Sans"'));
    await assertAllOk();
  });

  it('reports a PostgreSQL table dropped, until it is created again, also in the check of every project', async () => {
    await db.sql('DROP TABLE public.parcels');
    try {
      const result = await check();
      assert.notEqual(result.status, 'ok');
      const parcels = layer(result, 'parcels');
      assert.equal(parcels.status, 'broken');
      assert.ok(
        parcels.findings.some((finding) => finding.kind === 'datasource'),
        JSON.stringify(parcels),
      );
      const all = await stack.call('GET', '/api/checks');
      assert.equal(all.status, 200);
      const alpha = (all.body as Record<string, Check>)['alpha'];
      assert.ok(alpha && layer(alpha, 'parcels').status === 'broken');
      const cli = await steward('check');
      assert.notEqual(cli.code, 0);
    } finally {
      await createParcels();
    }
    await assertAllOk();
    assert.equal((await steward('check')).code, 0);
  });

  it('reports a fill image whose file is missing, until it is there', async () => {
    const image = join(data.dir, 'hatch.png');
    const rasterFill = `<layer class="RasterFill" enabled="1" locked="0" pass="0"><Option type="Map"><Option type="QString" name="imageFile" value="${image}"/></Option><prop k="imageFile" v="${image}"/></layer>`;
    editLayer('polygons', (xml) => xml.replace('</symbol>', `${rasterFill}</symbol>`));
    try {
      const result = await check();
      assert.equal(result.status, 'degraded');
      assert.deepEqual(layer(result, 'polygons'), {
        name: 'polygons',
        status: 'degraded',
        findings: [{ kind: 'image', message: `image file ${image} is missing` }],
      });
      writeFileSync(image, Buffer.from(PNG, 'base64'));
      await assertAllOk();
    } finally {
      editLayer('polygons', (xml) => xml.replace(rasterFill, ''));
    }
    await assertAllOk();
  });

  it('reports a user-defined CRS and one QGIS does not know, until the layer has its own again', async () => {
    const crsFindings = async () => layer(await check(), 'lines').findings.filter(({ kind }) => kind === 'crs');
    const authid = (from: string, to: string) =>
      editLayer('lines', (xml) => xml.replace(`<authid>${from}</authid>`, `<authid>${to}</authid>`));
    authid('EPSG:4326', 'USER:100000');
    try {
      assert.deepEqual(await crsFindings(), [
        { kind: 'crs', message: 'USER:100000 is a user-defined CRS of one QGIS Desktop, unknown elsewhere' },
      ]);
      authid('USER:100000', 'EPSG:999999');
      assert.deepEqual(await crsFindings(), [{ kind: 'crs', message: 'EPSG:999999 is not a CRS QGIS knows' }]);
      assert.equal(layer(await check(), 'lines').status, 'degraded');
    } finally {
      authid('USER:100000', 'EPSG:4326');
      authid('EPSG:999999', 'EPSG:4326');
    }
    await assertAllOk();
  });

  it('reports a layer QGIS Server does not publish (excluded from WMS in QGIS Desktop), until it is published again', async () => {
    const capabilities = '<WMSServiceCapabilities type="bool">true</WMSServiceCapabilities>';
    const restricted = '<WMSRestrictedLayers type="QStringList"><value>points</value></WMSRestrictedLayers>';
    const text = readFileSync(qgsFile(), 'utf8');
    assert.ok(text.includes(capabilities));
    writeFileSync(qgsFile(), text.replace(capabilities, capabilities + restricted));
    try {
      const result = await check();
      assert.equal(result.status, 'degraded', 'QGIS Server serves the project without the layer');
      assert.deepEqual(layer(result, 'points'), {
        name: 'points',
        status: 'broken',
        findings: [{ kind: 'server', message: 'QGIS Server does not publish layer "points"' }],
      });
      assert.equal(layer(result, 'lines').status, 'ok');
      assert.deepEqual(result.findings, []);
    } finally {
      writeFileSync(qgsFile(), readFileSync(qgsFile(), 'utf8').replace(restricted, ''));
    }
    await assertAllOk();
  });

  it('finds a layer published under its short name, or its id, as QGIS Server names it', async () => {
    editLayer('points', (xml) => xml.replace('</layername>', '</layername><shortname>pts</shortname>'));
    try {
      await assertAllOk();
    } finally {
      editLayer('points', (xml) => xml.replace('<shortname>pts</shortname>', ''));
    }
    const capabilities = '<WMSServiceCapabilities type="bool">true</WMSServiceCapabilities>';
    const byIds = '<WMSUseLayerIDs type="bool">true</WMSUseLayerIDs>';
    writeFileSync(qgsFile(), readFileSync(qgsFile(), 'utf8').replace(capabilities, capabilities + byIds));
    try {
      await assertAllOk();
    } finally {
      writeFileSync(qgsFile(), readFileSync(qgsFile(), 'utf8').replace(byIds, ''));
    }
  });

  it('answers 404 for an unknown project and 400 for an empty schema', async () => {
    assert.equal((await stack.call('GET', '/api/projects/nothing/check')).status, 404);
    assert.equal((await stack.call('GET', '/api/projects/alpha/check?schema=')).status, 400);
  });
});
