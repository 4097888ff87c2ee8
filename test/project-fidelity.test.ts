import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { runPyqgis, TEST_QGIS } from './support/qgis-runtime.js';
import { qgis2Project } from './support/qgis2-project.js';
import { type Stack, startStack } from './support/stack.js';

/**
 * Edits change what was asked and nothing else: projects as QGIS wrote them (the tested release,
 * and the form of QGIS 2.18), with Windows line endings, indented with tabs, in a localized
 * Desktop and edited by hand, are the same bytes again after an edit and its undoing.
 */

const TEAL = {
  type: 'vector',
  name: 'teal',
  rendering: {},
  symbology: { type: 'single_symbol', symbol: 'fill', properties: { color: '#00BBBB' } },
};

interface Variant {
  name: string;
  text: string;
  /** The name the layer's original style is asked back by, as a user reads it in the layer's JSON. */
  original: string;
  qgis2?: boolean;
}

/** The variants of the project QGIS wrote, each as another user's Desktop or editor would leave it. */
function variants(written: string, data: Fixtures): Variant[] {
  const localized = written
    .replace(/<map-layer-style-manager current="default">/g, '<map-layer-style-manager current="défaut">')
    .replace(/<map-layer-style name="default"\/>/g, '<map-layer-style name="défaut"/>');
  const handEdited = written
    .replace('<homePath path=""/>', "<homePath path='' />")
    .replace('<marker type="QString">kept</marker>', "<marker type='QString'>kept &gt; &apos;lost&apos;</marker>");
  return [
    { name: 'written', text: written, original: 'default' },
    { name: 'crlf', text: written.replace(/\n/g, '\r\n'), original: 'default' },
    {
      name: 'tabs',
      text: written.replace(/^( {2})+/gm, (spaces) => '\t'.repeat(spaces.length / 2)),
      original: 'default',
    },
    { name: 'localized', text: localized, original: 'DÉFAUT' },
    { name: 'hand_edited', text: handEdited, original: 'Default' },
    { name: 'qgis2', text: qgis2Project(data.geopackage, 'Parcels'), original: 'default', qgis2: true },
  ];
}

describe(`edits leave projects as QGIS wrote them (${TEST_QGIS.name})`, () => {
  let data: Fixtures;
  let stack: Stack;
  let scratch: string;
  let all: Variant[] = [];

  before(async () => {
    data = makeFixtures();
    stack = await startStack();
    scratch = mkdtempSync(join(tmpdir(), 'steward-fidelity-'));
    // At the depth of the projects' files, so that the relative paths QGIS writes resolve there too.
    mkdirSync(join(scratch, 'written'));
    const written = join(scratch, 'written', 'written.qgs');
    runPyqgis(TEST_QGIS, 'write_project.py', written, data.geopackage, data.rgbTiff);
    all = variants(readFileSync(written, 'utf8'), data);
    assert.ok(all[1]?.text.includes('\r\n') && all[2]?.text.includes('\n\t\t<'));
    assert.ok(all[3]?.text.includes('"défaut"') && all[4]?.text.includes("<homePath path='' />"));
  });
  after(async () => {
    await stack.stop();
    for (const dir of [scratch, data.dir]) rmSync(dir, { recursive: true, force: true });
  });

  /** Writes the variant as project `name` and returns its path. */
  function install(variant: Variant, name: string): string {
    const file = join(stack.projectsDir, name, `${name}.qgs`);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, variant.text);
    return file;
  }

  async function ok(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await stack.call(method, path, body);
    assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }

  it('adds a layer as QGIS reads it and removes it to the same bytes', async () => {
    for (const variant of all) {
      const name = `add_${variant.name}`;
      const file = install(variant, name);
      await ok('POST', `/api/projects/${name}/layers`, {
        type: 'vector',
        name: 'added',
        datasource: `${data.geopackage}|layername=points`,
      });
      const added = readFileSync(file, 'utf8');
      if (variant.qgis2) assert.doesNotMatch(added, /<layerorder/, 'QGIS 2 projects keep their order in the tree');
      if (variant.name === 'crlf') assert.doesNotMatch(added, /[^\r]\n/, 'no bare line feed in a CRLF file');
      if (variant.name === 'tabs') assert.doesNotMatch(added, /\n {2}/, 'no space indentation in a tab file');
      const read = JSON.parse(runPyqgis(TEST_QGIS, 'read_project.py', file)) as {
        layers: Record<string, { valid: boolean }>;
      };
      assert.equal(read.layers['added']?.valid, true, variant.name);
      assert.ok(
        Object.values(read.layers).every((layer) => layer.valid),
        variant.name,
      );
      await ok('DELETE', `/api/projects/${name}/layers/added`);
      assert.equal(readFileSync(file, 'utf8'), variant.text, variant.name);
    }
  });

  it('restyles a layer and switches back to its own style by the name QGIS shows, to the same bytes', async () => {
    for (const variant of all) {
      const name = `style_${variant.name}`;
      const file = install(variant, name);
      const before = (await ok('GET', `/api/projects/${name}/layers/polygons`)) as Record<string, unknown>;
      assert.equal(before['current_style'], variant.name === 'localized' ? 'défaut' : 'default', variant.name);
      await ok('POST', `/api/projects/${name}/styles`, TEAL);
      await ok('POST', `/api/projects/${name}/layers/polygons/style`, { name: 'teal', current: true });
      const restyled = (await ok('GET', `/api/projects/${name}/layers/polygons`)) as Record<string, unknown>;
      assert.equal(restyled['current_style'], 'teal');
      assert.notEqual(readFileSync(file, 'utf8'), variant.text);
      await ok('POST', `/api/projects/${name}/layers/polygons/style`, { name: variant.original, current: true });
      const back = (await ok('GET', `/api/projects/${name}/layers/polygons`)) as Record<string, unknown>;
      assert.equal(back['current_style'], before['current_style'], variant.name);
      await ok('DELETE', `/api/projects/${name}/styles/teal`);
      assert.equal(readFileSync(file, 'utf8'), variant.text, variant.name);
    }
  });

  it('names the styles a layer has when asked for one it has not', async () => {
    const variant = all.find((candidate) => candidate.qgis2) as Variant;
    install(variant, 'missing_style');
    const response = await stack.call('POST', '/api/projects/missing_style/layers/polygons/style', {
      name: 'nowhere',
      current: true,
    });
    assert.equal(response.status, 404);
    assert.match((response.body as { error: string }).error, /"nowhere".*its styles: "default"/);
  });

  it('sets a title and sets it back to the same bytes', async () => {
    for (const variant of all) {
      const name = `title_${variant.name}`;
      const file = install(variant, name);
      const title = ((await ok('GET', `/api/projects/${name}`)) as Record<string, string>)['title'] ?? '';
      assert.ok(title !== '', variant.name);
      await ok('PATCH', `/api/projects/${name}`, { title: 'Another title' });
      const changed = readFileSync(file, 'utf8');
      if (variant.qgis2) assert.doesNotMatch(changed, /<projectMetadata/, 'QGIS 2 projects have their title alone');
      const read = JSON.parse(runPyqgis(TEST_QGIS, 'read_project.py', file)) as { title: string };
      assert.equal(read.title, 'Another title', variant.name);
      await ok('PATCH', `/api/projects/${name}`, { title });
      assert.equal(readFileSync(file, 'utf8'), variant.text, variant.name);
    }
  });
});
