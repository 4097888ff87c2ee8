/**
 * The basemaps an operator offers (STEWARD_CONSOLE_BASEMAPS) under a project's map, in Chromium
 * against a real Steward: XYZ tiles GDAL cut from the demo elevation, served as files by Python's
 * HTTP server, and a WMS drawn by QGIS Server. Each is asked for by the browser, past the console's
 * content policy, and seen at the map's centre with the project's layers hidden.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { type Page } from 'playwright-core';

import { type BasemapSetting } from '../src/basemap-settings.js';
import { freePort } from '../src/runtime/ports.js';
import { type QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { centreWhen, screenshot } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { createTownWithDistricts } from './support/demo-town.js';
import { makeFixtures } from './support/fixtures.js';
import { after, before, describe, test } from './support/node-test.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { type Stack, startStack, startTestPool } from './support/stack.js';
import { until } from './support/wait.js';

const white = ([r = 0, g = 0, b = 0]: number[]) => r > 245 && g > 245 && b > 245;
const grey = ([r = 0, g = 0, b = 0]: number[]) => Math.abs(r - g) < 6 && Math.abs(g - b) < 6 && r < 100;

interface Basemaps {
  stack: Stack;
  offered: BasemapSetting[];
  stop(): Promise<void>;
}

/**
 * The demo elevation as bytes, its hill (at the town's centre) dark: with the project's layers
 * hidden and no basemap, the map's centre is white.
 */
function darkHill(demo: string, dir: string): string {
  const bytes = join(dir, 'elevation-bytes.tif');
  const scale = ['-scale', '134', '236', '200', '20'];
  execFileSync('gdal_translate', [
    '-q',
    '-ot',
    'Byte',
    ...scale,
    '-a_nodata',
    'none',
    join(demo, 'elevation.tif'),
    bytes,
  ]);
  return bytes;
}

/** XYZ tiles of `bytes` in `dir`/tiles, made by GDAL, served by Python's HTTP server. */
async function servedTiles(bytes: string, dir: string): Promise<{ server: ChildProcess; url: string }> {
  execFileSync('gdal2tiles.py', ['-q', '--xyz', '-z', '10-16', '-w', 'none', bytes, join(dir, 'tiles')]);
  const port = await freePort();
  const server = spawn('/usr/bin/python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port)], {
    cwd: join(dir, 'tiles'),
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  await until('the tile server to listen', async () => (await fetch(url).catch(() => undefined))?.ok === true);
  return { server, url };
}

/** Tiles, a pool of QGIS Server drawing a project of the demo elevation, and the stack offering both. */
async function startWithBasemaps(demo: string): Promise<Basemaps> {
  const dir = dirname(demo);
  const hill = darkHill(demo, dir);
  const tiles = await servedTiles(hill, dir);
  let pool: QgisFcgiPool | undefined;
  try {
    pool = await startTestPool(mkdtempSync(join(tmpdir(), 'steward-basemap-pool-')));
    const base = join(dir, 'base.qgs');
    runPyqgisScript('write_project.py', base, makeFixtures().geopackage, hill);
    const offered: BasemapSetting[] = [
      {
        name: 'Elevation tiles',
        type: 'xyz',
        url: `${tiles.url}/{z}/{x}/{y}.png`,
        attribution: 'Tiles: the demo elevation',
      },
      { name: 'Elevation WMS', type: 'wms', url: `${pool.url}?MAP=${encodeURIComponent(base)}`, layers: 'rgb' },
    ];
    const stack = await startStack({ dataRoots: [demo], basemaps: offered });
    const stopped = pool;
    return {
      stack,
      offered,
      stop: async () => {
        await stack.stop();
        await stopped.stop();
        tiles.server.kill();
      },
    };
  } catch (error) {
    await pool?.stop();
    tiles.server.kill();
    throw error;
  }
}

describe('web console: basemaps an operator offers', () => {
  let run: ConsoleRun<Basemaps>;
  let page: Page;
  let errors: string[];

  before(async () => {
    run = await startConsoleRun('console-offered-basemaps', startWithBasemaps, (server) => server.stack.api.url);
    ({ page, errors } = run);
    await createTownWithDistricts(run.server.stack, run.demo);
  });

  after(() => run?.close());

  test("the console's policy lets its pages load the basemaps' images, and only theirs", async () => {
    const [tiles, wms] = run.server.offered.map((each) => new URL(each.url.replace(/\{[xyz]\}/g, '0')).origin);
    const answer = await fetch(`${run.server.stack.api.url}/projects/town`);
    const policy = answer.headers.get('content-security-policy') ?? '';
    assert.ok(policy.includes(`img-src 'self' data: blob: ${tiles} ${wms};`), policy);
    assert.ok(policy.includes("connect-src 'self';"), policy);
  });

  test('each basemap is drawn under the hidden layers, with its attribution', async () => {
    await page.goto('/projects/town');
    await page.getByRole('button', { name: 'Zoom to the project' }).click();
    await page.getByLabel('districts visible on the map').uncheck();
    const map = page.getByTestId('project-map');
    await centreWhen(map, 'blank without a basemap', white);
    const picker = page.getByLabel('Basemap');
    for (const offered of run.server.offered) {
      const origin = new URL(offered.url.replace(/\{[xyz]\}/g, '0')).origin;
      const asked = page.waitForResponse((response) => response.url().startsWith(origin) && response.ok());
      await picker.selectOption({ label: offered.name });
      await asked;
      await centreWhen(map, `the dark grey of the hill (${offered.name})`, grey);
      await screenshot(page, `basemap-${offered.type}`);
    }
    await page.getByText('Tiles: the demo elevation').waitFor({ state: 'detached' });
    await picker.selectOption({ label: 'Elevation tiles' });
    await page.getByText('Tiles: the demo elevation').waitFor();
    await picker.selectOption('none');
    await centreWhen(map, 'blank again', white);
    assert.deepEqual(errors, []);
  });
});
