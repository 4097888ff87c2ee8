/**
 * The web console's administration pages in Chromium, against a Steward protected by a token, with
 * MapProxy's tile cache and a QGIS Server that registers through the monitoring plugin: the token
 * dialog, instances, the tile cache, processing and the project check. Every page is checked with
 * axe-core and screenshotted into test/screenshots/.
 */
import assert from 'node:assert/strict';
import { copyFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';

import gdal from 'gdal-async';
import { type Page } from 'playwright-core';

import type { InstanceAbout, InstanceProjects } from '../src/monitor/protocol.js';
import { freePort } from '../src/runtime/ports.js';
import { centreWhen, checkAccessibility, screenshot, settled } from './support/browser.js';
import { type CacheStack, startCacheStack } from './support/cache-stack.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';
import { writeRaster } from './support/rasters.js';
import { waitFor } from './support/wait.js';

const repo = resolve(import.meta.dirname, '..');
const TOKEN = 'console-admin-secret';
const MONITORING_TOKEN = 'console-monitoring-secret';

describe('web console administration', () => {
  let run: ConsoleRun<CacheStack>;
  let cs: CacheStack;
  let page: Page;
  let errors: string[];
  let demo: string;
  const call = (method: string, path: string, body?: unknown) => apiCall(cs.stack.api.url, method, path, body, TOKEN);

  const instanceIds = async () =>
    ((await call('GET', '/api/instances')).body as { servers: { id: string }[] }).servers.map(({ id }) => id);

  before(async () => {
    const monitoringPort = await freePort();
    const pluginEnv = {
      QGIS_PLUGINPATH: join(repo, 'plugin'),
      STEWARD_HOST: '127.0.0.1',
      STEWARD_PORT: String(monitoringPort),
      STEWARD_MONITORING_TOKEN: MONITORING_TOKEN,
      PYTHONDONTWRITEBYTECODE: '1',
    };
    const settings = { apiToken: TOKEN, monitoringPort, monitoringToken: MONITORING_TOKEN };
    run = await startConsoleRun(
      'console-admin',
      (data) => startCacheStack({ dataRoots: [data], ...settings }, {}, { env: pluginEnv }),
      (server) => server.stack.api.url,
    );
    ({ server: cs, page, errors, demo } = run);
  });

  after(() => run?.close());

  test('a protected Steward asks for the token, refuses a wrong one in words, accepts the right one', async () => {
    await page.goto('/');
    const dialog = page.getByRole('dialog', { name: 'API token' });
    await dialog.getByText('protected by a token').waitFor();
    await checkAccessibility(page, 'the token dialog');
    await dialog.getByLabel('Token').fill('not-the-token');
    await dialog.getByRole('button', { name: 'Use this token' }).click();
    // The words the console keeps for the code token_invalid, not the API's sentence for scripts.
    const refused = dialog.getByRole('alert').getByText('The API refused this token');
    await refused.waitFor();
    assert.equal(
      await refused.innerText(),
      'The API refused this token: it is wrong, expired or revoked. Check it and try again.',
    );
    assert.equal(await page.evaluate(() => sessionStorage.getItem('steward.token')), null);
    await screenshot(page, 'token-refused');

    await dialog.getByLabel('Token').fill(TOKEN);
    await dialog.getByRole('button', { name: 'Use this token' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('heading', { name: 'No project yet' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('steward.token')), TOKEN);
    assert.deepEqual(errors, []);
  });

  test('instances: the registered QGIS Server appears, with its metadata, live requests and log', async () => {
    await page.getByRole('link', { name: 'Instances' }).click();
    // The pool runs several qgis_mapserv.fcgi processes, each its own instance.
    const id = await waitFor('a registered instance', async () => (await instanceIds())[0]);
    const row = page.getByRole('row', { name: new RegExp(`^${id}\\b`) });
    await row.waitFor({ timeout: 20_000 });
    assert.match(await row.innerText(), new RegExp(`${id}\\s+127\\.0\\.0\\.1\\s+Binded \\d+ seconds ago`));
    await checkAccessibility(page, 'the instances page');
    await screenshot(page, 'instances');

    await row.getByRole('link', { name: id }).click();
    await page.getByRole('heading', { name: `Instance ${id}` }).waitFor();
    await page
      .getByText(/^3\.\d+/)
      .first()
      .waitFor();
    const served = page.getByTestId('requests-served');
    await served.waitFor();
    const before = Number(await served.innerText());
    const wms = `${cs.stack.qgis.url}?SERVICE=WMS&REQUEST=GetCapabilities&MAP=${join(demo, 'none.qgs')}`;
    // nginx asks Steward about each request to QGIS Server (docs/access.md, "QGIS Server"), and
    // sends one after the other to each of the pool's processes in turn: one of them is this instance.
    for (let request = 0; request < 2; request++)
      await fetch(wms, { headers: { authorization: `Bearer ${TOKEN}` } }).then((response) => response.text());
    await page.waitForFunction(
      (count) => Number(document.querySelector('[data-testid="requests-served"]')?.textContent) > count,
      before,
    );
    const chart = page.getByRole('figure', { name: /Requests served and failed/ });
    await page.waitForFunction(() => Number(document.querySelector('figure.chart')?.getAttribute('data-points')) >= 3);
    assert.equal(await chart.locator('canvas').count(), 1);
    await page
      .getByRole('log')
      .getByText(/REQUEST:GetCapabilities/)
      .first()
      .waitFor({ timeout: 10_000 });
    await checkAccessibility(page, 'the instance page');
    await screenshot(page, 'instance');
    assert.deepEqual(errors, []);
  });

  test('instances: a pinned project and one named by hand are reloaded on every instance, each answer shown', async () => {
    for (const name of ['pinned', 'by_hand'])
      assert.equal((await call('POST', '/api/projects', { name, author: 'Ada' })).status, 201);
    assert.equal((await call('PUT', '/api/projects/pinned/pin')).status, 200);
    try {
      const instances = await instanceIds();
      await page.goto('/instances');
      const pinned = page.getByRole('table', { name: 'Pinned projects' }).getByRole('row', { name: /^pinned\b/ });
      assert.match(await pinned.innerText(), /pinned\s+the API/);
      await pinned.getByRole('button', { name: 'Reload pinned on every instance' }).click();
      const reloads = page.getByRole('list', { name: 'Reloads of pinned' });
      await reloads.waitFor();
      // A pool's process waiting for its next request drops the project then, and loads it at that request.
      const done = /^(\w+): (reloaded|dropped: its next request loads it again)$/;
      assert.deepEqual(
        (await reloads.getByRole('listitem').allInnerTexts()).map((line) => done.exec(line)?.[1]).sort(),
        [...instances].sort(),
      );
      const form = page.getByRole('form', { name: 'Reload a project on every instance' });
      await form.getByLabel('Project').fill('by_hand');
      await form.getByRole('button', { name: 'Reload everywhere' }).click();
      const byHand = page.getByRole('list', { name: 'Reloads of by_hand' });
      await byHand.waitFor();
      assert.equal(await byHand.getByRole('listitem').count(), instances.length);
      await checkAccessibility(page, 'the instances page with reloads');
      await screenshot(page, 'instances-reloads');
    } finally {
      assert.equal((await call('DELETE', '/api/projects/pinned/pin')).status, 200);
      for (const name of ['pinned', 'by_hand'])
        assert.equal((await call('DELETE', `/api/projects/${name}`)).status, 200);
    }
    assert.deepEqual(errors, []);
  });

  test('processing: a histogram drawn as a chart, a calculation added as a layer and drawn, overviews built', async () => {
    assert.equal((await call('POST', '/api/projects', { name: 'terrain', author: 'Ada' })).status, 201);
    const elevation = { datasource: join(demo, 'elevation.tif'), name: 'elevation', type: 'raster' };
    assert.equal((await call('POST', '/api/projects/terrain/layers', elevation)).status, 201);

    await page.goto('/projects/terrain');
    await page.getByRole('link', { name: 'Processing' }).click();
    await page.getByRole('button', { name: 'Draw the histogram' }).click();
    const chart = page.getByRole('figure', { name: 'Band 1' });
    await chart.locator('canvas').waitFor();
    assert.match(await chart.innerText(), /\d+ pixels from -?[\d.]+ to [\d.]+ in 64 bins/);

    const calculator = page.getByRole('form', { name: 'Raster calculator' });
    assert.equal(await calculator.getByLabel('Expression').inputValue(), 'elevation@1 * 2');
    assert.equal(await calculator.getByLabel('Output GeoTIFF').inputValue(), join(demo, 'terrain-calculated.tif'));
    await calculator.getByLabel('New layer name').fill('doubled');
    await calculator.getByRole('button', { name: 'Calculate and add the layer' }).click();
    await page.getByText(/Layer doubled added: 1 band\(s\) of Float32/).waitFor({ timeout: 30_000 });
    assert.deepEqual((await call('GET', '/api/projects/terrain/layers')).body, ['elevation', 'doubled']);
    const map = page.getByTestId('project-map');
    await centreWhen(map, 'drawn', ([r = 0, g = 0, b = 0]) => !(r === 255 && g === 255 && b === 255));
    await checkAccessibility(page, 'the processing page');
    await screenshot(page, 'processing');

    const large = writeRaster(join(demo, 'large.tif'), {
      type: 'Byte',
      width: 600,
      height: 600,
      value: (x, y) => (x + y) % 256,
    });
    const layer = { datasource: large, name: 'large', type: 'raster' };
    assert.equal((await call('POST', '/api/projects/terrain/layers', layer)).status, 201);
    await page.reload();
    const overviews = page.getByRole('form', { name: 'Overviews' });
    await overviews.getByRole('button', { name: 'Build overviews' }).click();
    await page.getByText('Layer elevation needs no overviews: it fits in 256 × 256 pixels.').waitFor();
    await overviews.getByLabel('Raster layer').selectOption('large');
    await overviews.getByRole('button', { name: 'Build overviews' }).click();
    await page.getByText(`Overviews built at factors 2, 4 in ${large}.ovr.`).waitFor({ timeout: 30_000 });
    const dataset = gdal.open(large);
    const built = dataset.bands.get(1).overviews;
    assert.deepEqual(
      Array.from({ length: built.count() }, (_, index) => built.get(index).size),
      [
        { x: 300, y: 300 },
        { x: 150, y: 150 },
      ],
    );
    dataset.close();
    await checkAccessibility(page, 'the processing page after building overviews');
    assert.deepEqual(errors, []);
  });

  test('keyboard: the skip link, the sections, a link in a table and a form, without a mouse', async () => {
    await page.goto('/');
    await page.getByRole('row', { name: /terrain/ }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await focusedName(page), 'Skip to content');
    await page.keyboard.press('Enter');
    assert.equal(await settled(page, () => document.activeElement?.id, 'main'), 'main');

    await tabTo(page, 'Instances');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Instances' }).waitFor();
    const [{ id }] = ((await call('GET', '/api/instances')).body as { servers: { id: string }[] }).servers as [
      { id: string },
    ];
    await page.getByRole('link', { name: id }).waitFor();
    await tabTo(page, id);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `Instance ${id}` }).waitFor();

    await page.goto('/projects/terrain/processing');
    await page.getByRole('button', { name: 'Draw the histogram' }).waitFor();
    await tabTo(page, 'Bins');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('16');
    await page.keyboard.press('Enter');
    await page.getByText(/pixels from .* in 16 bins/).waitFor();
    assert.deepEqual(errors, []);
  });

  test('tile cache: its state, a reset, and its jobs', async () => {
    assert.equal((await call('POST', '/api/projects', { name: 'tiles', author: 'Ada' })).status, 201);
    const districts = {
      datasource: `${join(demo, 'town.gpkg')}|layername=districts`,
      name: 'districts',
      type: 'vector',
    };
    assert.equal((await call('POST', '/api/projects/tiles/layers', districts)).status, 201);
    await page.goto('/projects/tiles');
    await page.getByRole('link', { name: 'Tile cache' }).click();
    await page.getByRole('heading', { name: 'tiles: tile cache' }).waitFor();
    await page.getByText('valid', { exact: true }).waitFor();
    await page.getByText('the filesystem').waitFor();
    await page.getByText('No seed or truncate job yet').waitFor();
    const form = page.getByRole('form', { name: 'Seed or truncate the cache' });
    await form.getByLabel('To zoom level').fill('12');
    await form.getByRole('button', { name: 'Seed' }).click();
    await form.getByText(/The seed job of levels 0 to 12 is (queued|running)/).waitFor();
    const seeded = page.getByRole('row', { name: /^seed/ });
    await seeded.getByRole('progressbar').waitFor();
    await seeded.getByRole('button', { name: 'Cancel the seed job' }).click();
    await seeded.getByText('cancelled').waitFor();
    await form.getByRole('button', { name: 'Truncate' }).click();
    const truncated = page.getByRole('row', { name: /^truncate/ });
    await truncated.getByText('succeeded').waitFor({ timeout: 30_000 });
    assert.match(await truncated.innerText(), /100%/);
    const jobs = (await call('GET', '/api/jobs?project=tiles')).body as { kind: string; state: string }[];
    assert.deepEqual(jobs.map(({ kind, state }) => `${kind} ${state}`).sort(), [
      'seed cancelled',
      'truncate succeeded',
    ]);
    await page.getByRole('button', { name: 'Reset the cache' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Clear every tile' }).click();
    await page.getByText('The cached tiles of tiles were cleared').waitFor();
    await checkAccessibility(page, 'the tile cache page');
    await screenshot(page, 'cache');
    assert.deepEqual(errors, []);
  });

  test('project check: a layer whose file went away is shown broken, with the reason', async () => {
    const copy = join(demo, 'moving.gpkg');
    copyFileSync(join(demo, 'town.gpkg'), copy);
    const layer = { datasource: `${copy}|layername=districts`, name: 'moving', type: 'vector' };
    assert.equal((await call('POST', '/api/projects/terrain/layers', layer)).status, 201);
    renameSync(copy, `${copy}.away`);

    await page.goto('/projects/terrain');
    const problems = page.getByRole('list', { name: 'Layers with problems' });
    const broken = problems.getByRole('listitem').filter({ has: page.getByText('moving', { exact: true }) });
    await broken.waitFor({ timeout: 20_000 });
    assert.match(await broken.innerText(), /moving\s+broken[\s\S]*datasource: .+/);
    const card = page.locator('.layer-list > li.card').filter({ hasText: 'moving' });
    assert.match(await card.innerText(), /broken[\s\S]*Why broken/);
    await checkAccessibility(page, 'the project page with a broken layer');
    await screenshot(page, 'project-check');
    assert.deepEqual(errors, []);
  });

  /** The instance's page lists `map` among its cached projects, and its process and settings as the plugin tells them. */
  async function instancePageShows(id: string, map: string): Promise<void> {
    await page.goto(`/instances/${encodeURIComponent(id)}`);
    const row = page.getByRole('table', { name: 'Projects in the cache' }).getByRole('row').filter({ hasText: map });
    await row.waitFor();
    assert.match(await row.innerText(), /\t1\s+none\s*$/);
    const about = (await call('GET', `/api/instances/${id}/about`)).body as InstanceAbout;
    const facts = page.getByTestId('instance-process');
    await facts.waitFor();
    assert.match(await facts.innerText(), new RegExp(`Process\\s+${about.process.pid}\\s+Memory\\s+[\\d.]+ (MiB|GiB)`));
    const settings = page.getByRole('table', { name: 'QGIS Server settings' });
    assert.equal(await settings.locator('tbody tr').count(), about.settings.values.length);
    const [first] = about.settings.values;
    assert.ok(first, 'the plugin tells at least one setting');
    const firstRow = settings.locator('tbody tr').first();
    const cells = (await firstRow.innerText()).split('\t').map((cell) => cell.trim());
    assert.deepEqual(cells.slice(0, 2), [first.name, String(first.value) || 'not set']);
    await checkAccessibility(page, 'the instance page with its cached projects and settings');
    await screenshot(page, 'instance-details');
  }

  test('projects: the pin toggle pins a project, which the registered instance loads at once, and unpins it', async () => {
    assert.equal((await call('POST', '/api/projects', { name: 'pinned', author: 'Ada' })).status, 201);
    const layer = { datasource: `${join(demo, 'town.gpkg')}|layername=districts`, name: 'districts', type: 'vector' };
    assert.equal((await call('POST', '/api/projects/pinned/layers', layer)).status, 201);
    const ids = await instanceIds();
    const map = join(cs.stack.projectsDir, 'pinned', 'pinned.qgs');
    const cachedBy = async (id: string) =>
      ((await call('GET', `/api/instances/${id}/projects`)).body as InstanceProjects).projects.some(
        (project) => project.map === map,
      );
    // qgis_mapserv.fcgi runs no event loop: a process loads the pin when its next request starts.
    const cached = async () => {
      await fetch(`${cs.stack.qgis.url}?SERVICE=WMS&REQUEST=GetCapabilities&MAP=${join(demo, 'none.qgs')}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      return (await Promise.all(ids.map(cachedBy))).every(Boolean);
    };
    const pinned = async () => ((await call('GET', '/api/projects/pinned')).body as { pinned: boolean }).pinned;
    assert.deepEqual(
      await Promise.all(ids.map(cachedBy)),
      ids.map(() => false),
    );

    await page.goto('/');
    const toggle = page.getByRole('checkbox', { name: 'Pin project pinned' });
    assert.equal(await toggle.isChecked(), false);
    await toggle.check();
    await waitFor('the pin', pinned);
    await waitFor('the instance to load the pinned project', cached);
    await page.reload();
    assert.equal(await toggle.isChecked(), true);
    await checkAccessibility(page, 'the projects page with a pinned project');
    await screenshot(page, 'projects-pinned');
    await instancePageShows(ids[0] ?? '', map);

    await page.goto('/');
    await toggle.uncheck();
    await waitFor('the pin to go', async () => !(await pinned()));
    await page.reload();
    assert.equal(await toggle.isChecked(), false);
    assert.deepEqual(errors, []);
  });
});

/** What a screen reader would call the focused element: its label, or else its text. */
function focusedName(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    if (!element) return '';
    const labelled = (element as HTMLInputElement).labels?.[0]?.firstChild?.textContent;
    return (element.getAttribute('aria-label') ?? labelled ?? element.textContent ?? '').trim();
  });
}

/** Presses Tab until the control named `name` has the focus. */
async function tabTo(page: Page, name: string): Promise<void> {
  const seen: string[] = [];
  for (let press = 0; press < 60; press++) {
    await page.keyboard.press('Tab');
    const focused = await focusedName(page);
    if (focused === name) return;
    seen.push(focused);
  }
  throw new Error(`Tab never reached “${name}”; it went through ${seen.join(' | ')}`);
}
