/**
 * The QGIS Desktop plugin (desktop/steward_publish), run headless by PyQGIS: a project saved as a
 * .qgz beside a GeoPackage and a GeoTIFF in another folder is packed with its data and published
 * with a bearer token; QGIS Server draws the published project through Steward as PyQGIS draws the
 * original, and the stored layers read the files in the upload root. A wrong token is refused.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { agree } from './support/drawings.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { type Check } from './support/project-check.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { runPyqgisAsync, TEST_QGIS } from './support/qgis-runtime.js';
import { scratchFolder } from './support/scratch.js';
import { type Stack, startStack } from './support/stack.js';

const TOKEN = 'desktop-plugin-test-token-0123456789';
const BBOX = [0.5, 43.5, 3.5, 46.5];
const SIZE = 300;

interface PluginRun {
  status: number;
  message?: string;
  answer?: { created: boolean; data_dir?: string; data_files: string[]; check: Check };
  files?: Record<string, string>;
  kept?: string[];
  menu: Array<[string, string]>;
}

describe('the QGIS Desktop plugin publishes the open project with its data', () => {
  let stack: Stack;
  let data: Fixtures;
  let uploads = '';
  const scratch = scratchFolder('steward-desktop-plugin-');

  /** Off the event loop: the plugin sends its upload to the API of this process. */
  async function publishWithPlugin(project: string, name: string, token = TOKEN): Promise<PluginRun> {
    const url = stack.api.url;
    return JSON.parse(
      await runPyqgisAsync(TEST_QGIS, 'desktop_publish.py', 'publish', project, url, token, name),
    ) as PluginRun;
  }

  before(async () => {
    data = makeFixtures();
    uploads = join(scratch, 'uploads');
    mkdirSync(uploads);
    // Files, as access.test.ts: the database stack waits for QGIS Server's registration without a token.
    stack = await startStack(
      { apiToken: TOKEN, dataRoots: [data.dir, uploads], uploadRoot: uploads },
      {},
      'filesystem',
    );
  });

  after(async () => {
    await stack?.stop();
  });

  it('packs a .qgz and the files of its layers, which QGIS Server then draws as QGIS draws the original', async () => {
    // As an analyst keeps them: the project in one folder, its data in another beside it.
    const folder = join(scratch, 'work');
    mkdirSync(join(folder, 'data'), { recursive: true });
    mkdirSync(join(folder, 'maps'));
    copyFileSync(data.geopackage, join(folder, 'data', 'places.gpkg'));
    copyFileSync(data.rgbTiff, join(folder, 'data', 'colours.tif'));
    const project = join(folder, 'maps', 'survey.qgz');
    runPyqgisScript('publish_oracle.py', 'make', folder, 'places.gpkg', 'colours.tif', project);
    const expected = join(scratch, 'expected.png');
    runPyqgisScript('publish_oracle.py', 'draw', project, expected, String(SIZE), String(SIZE), ...BBOX.map(String));

    const refused = await publishWithPlugin(project, 'survey', 'not-the-token');
    assert.equal(refused.status, 401, JSON.stringify(refused));
    const run = await publishWithPlugin(project, 'survey');
    assert.equal(run.status, 0, JSON.stringify(run));
    assert.deepEqual(run.menu, [['&Steward', 'Publish this project to Steward…']], 'the plugin sets itself up');
    // With the sidecars GDAL reads them with (the statistics QGIS wrote in colours.tif.aux.xml).
    const packed = Object.keys(run.files ?? {}).filter((entry) => !entry.endsWith('.aux.xml'));
    assert.deepEqual(packed.sort(), ['data/data/colours.tif', 'data/data/places.gpkg']);
    assert.deepEqual(run.kept, []);
    const answer = run.answer;
    assert.equal(answer?.created, true);
    assert.deepEqual(answer?.check.layers.map((layer) => [layer.name, layer.status]).sort(), [
      ['colours', 'ok'],
      ['places', 'ok'],
    ]);

    // The stored project's layers read the files Steward wrote into the upload root.
    const dataDir = answer?.data_dir ?? '';
    assert.ok(dataDir.startsWith(`${uploads}/survey/`), dataDir);
    const source = async (layer: string): Promise<string> => {
      const url = `${stack.api.url}/api/projects/survey/layers/${layer}`;
      const reply = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
      const path = ((await reply.json()) as { source: string }).source;
      // Relative to the stored project's folder, as QGIS writes paths.
      return resolve(stack.projectsDir, 'survey', path);
    };
    const sources = [['colours', await source('colours')] as const, ['places', await source('places')] as const];
    assert.deepEqual(sources.sort(), [
      ['colours', join(dataDir, 'data', 'data', 'colours.tif')],
      ['places', `${join(dataDir, 'data', 'data', 'places.gpkg')}|layername=points`],
    ]);
    assert.ok(existsSync(join(dataDir, 'data', 'data', 'places.gpkg')));

    const query = new URLSearchParams({
      layers: 'colours,places',
      bbox: BBOX.join(','),
      crs: 'EPSG:4326',
      width: String(SIZE),
      height: String(SIZE),
    });
    const map = await fetch(`${stack.api.url}/api/projects/survey/wms?${query}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(map.status, 200, await map.clone().text());
    const served = decodePng(Buffer.from(await map.arrayBuffer()));
    const drawn = decodePng(readFileSync(expected));
    assert.ok(served.paintedPixels() > 0, 'QGIS Server drew the layers');
    const { ok, differing } = agree(served, drawn);
    assert.ok(ok, `${differing} of ${drawn.paintedPixels()} painted pixels differ from PyQGIS's drawing`);

    const again = await publishWithPlugin(project, 'survey');
    assert.equal(again.status, 409, 'an existing project is not replaced unasked');
    assert.match(again.message ?? '', /replace=true/);
  });

  it('builds the plugin zip that QGIS installs', () => {
    const zip = join(scratch, 'steward_publish.zip');
    execFileSync('npm', ['run', '--silent', 'build:desktop-plugin', '--', zip], { stdio: 'pipe' });
    const listing = execFileSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).trim().split('\n').sort();
    assert.deepEqual(listing, [
      'steward_publish/',
      'steward_publish/__init__.py',
      'steward_publish/bundle.py',
      'steward_publish/metadata.txt',
      'steward_publish/plugin.py',
      'steward_publish/upload.py',
    ]);
  });
});
