/**
 * The console's destructive controls in Chromium, against a real Steward, QGIS Server and MapProxy:
 * the raster calculator never replaces a file unless the person confirms it, and never its own
 * input; the tile cache's reset asks first; truncation checks its zoom levels on the form.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { type Page } from 'playwright-core';

import { centreWhen, checkAccessibility, screenshot, settled } from './support/browser.js';
import { type CacheStack, startCacheStack } from './support/cache-stack.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';
import { until } from './support/wait.js';

/** The SHA-256 of a file: whether its bytes changed. */
function digest(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

describe('web console: destructive actions', () => {
  let run: ConsoleRun<CacheStack>;
  let cs: CacheStack;
  let page: Page;
  let errors: string[];
  let demo: string;
  const call = (method: string, path: string, body?: unknown) => apiCall(cs.stack.api.url, method, path, body);

  before(async () => {
    run = await startConsoleRun(
      'console-safety',
      (data) => startCacheStack({ dataRoots: [data] }),
      (server) => server.stack.api.url,
    );
    ({ server: cs, page, errors, demo } = run);
    assert.equal((await call('POST', '/api/projects', { name: 'terrain', author: 'Ada' })).status, 201);
    const elevation = { datasource: join(demo, 'elevation.tif'), name: 'elevation', type: 'raster' };
    assert.equal((await call('POST', '/api/projects/terrain/layers', elevation)).status, 201);
  });

  after(() => run?.close());

  test('the calculator API refuses an existing output (409) unless told to overwrite, and a layer source always', async () => {
    const input = join(demo, 'elevation.tif');
    const before = digest(input);
    const url = '/api/processing/raster/calculator/terrain';
    const own = await call('POST', url, { expression: 'elevation@1 * 2', output: input, overwrite: true });
    assert.equal(own.status, 409);
    assert.match((own.body as { error: string }).error, /is the datasource of a project layer/);
    const first = join(demo, 'api-first.tif');
    assert.equal((await call('POST', url, { expression: 'elevation@1 * 2', output: first })).status, 201);
    const made = digest(first);
    const again = await call('POST', url, { expression: 'elevation@1 * 3', output: first });
    assert.equal(again.status, 409);
    assert.equal((again.body as { error: string }).error.includes(first), true, 'the 409 names the file');
    assert.equal(digest(first), made);
    assert.equal(
      (await call('POST', url, { expression: 'elevation@1 * 3', output: first, overwrite: true })).status,
      201,
    );
    assert.notEqual(digest(first), made);
    const failed = join(demo, 'api-failed.tif');
    assert.equal((await call('POST', url, { expression: 'elevation@7', output: failed })).status, 400);
    assert.equal(existsSync(failed), false, 'a refused calculation leaves no GeoTIFF');
    assert.equal(digest(input), before);
  });

  test('the calculator page: its own input refused in words, an existing output replaced only once confirmed', async () => {
    const input = join(demo, 'elevation.tif');
    const original = digest(input);
    await page.goto('/projects/terrain/processing');
    const calculator = page.getByRole('form', { name: 'Raster calculator' });
    const output = calculator.getByLabel('Output GeoTIFF');
    const name = calculator.getByLabel('New layer name');
    const submit = calculator.getByRole('button', { name: 'Calculate and add the layer' });
    const section = page.locator('section', { has: calculator });

    await output.fill(input);
    await submit.click();
    await section
      .getByRole('alert')
      .getByText(/is the datasource of a project layer/)
      .waitFor();
    assert.equal(digest(input), original);

    const target = join(demo, 'terrain-calculated.tif');
    await output.fill(target);
    await name.fill('doubled');
    await submit.click();
    await page.getByText(/Layer doubled added/).waitFor({ timeout: 30_000 });
    const doubled = digest(target);

    await name.fill('doubled');
    await calculator.getByLabel('Expression').fill('elevation@1 * 3');
    await submit.click();
    await section.getByRole('alert').getByText('has a layer named “doubled” already').waitFor();
    assert.equal(digest(target), doubled, 'a taken name is refused before anything is calculated');

    // The file of layer doubled now: refused in words, with no offer to replace it.
    await name.fill('tripled');
    await submit.click();
    await section
      .getByRole('alert')
      .getByText(/is the datasource of a project layer/)
      .waitFor();
    const dialog = page.getByRole('dialog', { name: 'Replace the existing file?' });
    assert.equal(await dialog.isVisible(), false);
    assert.equal(digest(target), doubled);

    const spare = join(demo, 'spare.tif');
    writeFileSync(spare, 'an earlier result');
    await output.fill(spare);
    await submit.click();
    await dialog.getByText(`${spare} exists already (the API answered 409)`).waitFor();
    assert.equal(
      await settled(page, () => document.activeElement?.closest('dialog') !== null, true),
      true,
      'focus moves into the dialog',
    );
    await checkAccessibility(page, 'the calculator asking to replace a file');
    await screenshot(page, 'calculator-replace');
    await dialog.getByRole('button', { name: 'Keep the file' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(readFileSync(spare, 'utf8'), 'an earlier result');
    assert.deepEqual((await call('GET', '/api/projects/terrain/layers')).body, ['elevation', 'doubled']);

    await submit.click();
    await dialog.getByRole('button', { name: 'Replace the file' }).click();
    await page.getByText(/Layer tripled added/).waitFor({ timeout: 30_000 });
    assert.notEqual(readFileSync(spare, 'utf8'), 'an earlier result');
    assert.deepEqual((await call('GET', '/api/projects/terrain/layers')).body, ['elevation', 'doubled', 'tripled']);
    assert.equal(digest(input), original);
    assert.deepEqual(errors, []);
  });

  test('the tile cache: truncation checks its levels on the form; the reset asks first', async () => {
    await page.goto('/projects/terrain/cache');
    const form = page.getByRole('form', { name: 'Seed or truncate the cache' });
    await form.getByLabel('From zoom level').fill('');
    await form.getByLabel('To zoom level').fill('3');
    await form.getByRole('button', { name: 'Truncate' }).click();
    await form.getByRole('alert').getByText('“From zoom level” is empty: enter a zoom level from 0 to 19.').waitFor();
    await form.getByRole('button', { name: 'Seed' }).click();
    await form.getByRole('alert').getByText('“From zoom level” is empty').waitFor();
    await form.getByLabel('From zoom level').fill('5');
    await form.getByRole('button', { name: 'Truncate' }).click();
    await form.getByRole('alert').getByText('“From zoom level” (5) must not be above “To zoom level” (3).').waitFor();
    assert.deepEqual((await call('GET', '/api/jobs?project=terrain')).body, [], 'nothing was sent');
    await screenshot(page, 'cache-levels-refused');

    await form.getByLabel('From zoom level').fill('1');
    await form.getByRole('button', { name: 'Truncate' }).click();
    await form.getByText(/^The truncate job of levels 1 to 3 is (queued|running|succeeded)/).waitFor();

    const reset = page.getByRole('button', { name: 'Reset the cache' });
    await reset.click();
    const dialog = page.getByRole('dialog', { name: 'Reset the tile cache of terrain?' });
    await dialog.getByText('Every cached tile of terrain is deleted').waitFor();
    await checkAccessibility(page, 'the cache reset confirmation');
    await screenshot(page, 'cache-reset-confirm');
    await dialog.getByRole('button', { name: 'Keep the tiles' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await page.getByText('The cached tiles of terrain were cleared').count(), 0);
    await reset.click();
    await dialog.getByRole('button', { name: 'Clear every tile' }).click();
    await page.getByText('The cached tiles of terrain were cleared').waitFor();
    assert.deepEqual(errors, []);
  });

  test('layers: one removed from the console once confirmed', async () => {
    await page.goto('/projects/terrain');
    const remove = page.getByRole('button', { name: 'Remove layer tripled' });
    await remove.click();
    const dialog = page.getByRole('dialog', { name: 'Remove layer “tripled”?' });
    await dialog.getByText('The data it reads stays where it is').waitFor();
    await checkAccessibility(page, 'the layer removal confirmation');
    await screenshot(page, 'layer-remove-confirm');
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.deepEqual((await call('GET', '/api/projects/terrain/layers')).body, ['elevation', 'doubled', 'tripled']);
    await remove.click();
    await dialog.getByRole('button', { name: 'Remove tripled' }).click();
    await page.getByRole('status').getByText('Layer tripled was removed from terrain.').waitFor();
    await remove.waitFor({ state: 'detached' });
    assert.deepEqual((await call('GET', '/api/projects/terrain/layers')).body, ['elevation', 'doubled']);
    assert.equal(existsSync(join(demo, 'spare.tif')), true, 'its data file stays');
    assert.deepEqual(errors, []);
  });

  test('live views poll nothing in a hidden tab, and nothing once their instance is gone', async () => {
    const asked: string[] = [];
    page.on('request', (request) => asked.push(new URL(request.url()).pathname));
    const setVisibility = (state: string) =>
      page.evaluate((value) => {
        Object.defineProperty(document, 'visibilityState', { value, configurable: true });
        document.dispatchEvent(new Event('visibilitychange'));
      }, state);
    const jobsAsked = () => asked.filter((path) => path === '/api/jobs').length;

    await page.goto('/projects/terrain/cache');
    await page.waitForRequest((request) => new URL(request.url()).pathname === '/api/jobs');
    await page.waitForRequest((request) => new URL(request.url()).pathname === '/api/jobs');
    await setVisibility('hidden');
    const hidden = jobsAsked();
    await page.waitForTimeout(3500);
    assert.equal(jobsAsked(), hidden, 'a hidden tab asks nothing');
    const shown = page.waitForRequest((request) => new URL(request.url()).pathname === '/api/jobs', { timeout: 500 });
    await setVisibility('visible');
    await shown;

    await page.goto('/instances/dead-instance');
    const notice = page.getByRole('alert').filter({ hasText: 'Instance dead-instance is no longer registered' });
    await notice.waitFor();
    // The pool's instances are registered now: the notice links each of them.
    const servers = ((await call('GET', '/api/instances')).body as { servers: { id: string }[] }).servers;
    assert.ok(servers.length > 0, 'the pool registered through the plugin');
    for (const { id } of servers) await notice.getByRole('link', { name: id }).waitFor();
    const after = asked.length;
    await page.waitForTimeout(3500);
    const since = asked.slice(after).filter((path) => path.startsWith('/api/instances/dead-instance'));
    assert.deepEqual(since, [], 'a gone instance is polled no more');
    await checkAccessibility(page, 'the page of a gone instance');
    await screenshot(page, 'instance-gone');
    assert.deepEqual(errors, []);
  });

  test('the map asks again by itself after a 502, without a pan', async () => {
    await page.goto('/projects/terrain');
    const map = page.getByTestId('project-map');
    const drawn = ([r = 0, g = 0, b = 0]: number[]) => !(r === 255 && g === 255 && b === 255);
    // Layer doubled alone: the raster is white at the centre of elevation's hill, on top of the tree.
    await page.getByLabel('elevation visible on the map').uncheck();
    await centreWhen(map, 'drawn', drawn);
    await page.getByLabel('doubled visible on the map').uncheck();
    await centreWhen(map, 'empty', (pixel) => !drawn(pixel));
    // QGIS Server's processes die, as in a crash: the API answers 502 until the pool has started
    // them again. Killed four times in a row, the supervisor waits 2 s before the fourth restart
    // (250 ms, then doubling).
    const pool = cs.stack.pool;
    assert.ok(pool, 'the production stack runs a pool');
    for (let kill = 1; kill <= 4; kill += 1) {
      for (const pid of pool.pids) process.kill(pid, 'SIGKILL');
      await until('the pool to be down', async () => !(await pool.accepting()), 10_000);
      if (kill < 4) await until('the pool to be back', () => pool.accepting(), 30_000);
    }
    await page.getByLabel('doubled visible on the map').check();
    // The map's failure, and the legend's: both go once QGIS Server answers again.
    const alerts = page.getByRole('alert').filter({ hasText: 'QGIS Server cannot be reached' });
    const alert = alerts.first();
    await alert.waitFor();
    assert.equal(await alert.innerText(), "QGIS Server cannot be reached: Steward's log says why.");
    await centreWhen(map, 'drawn after the 502', drawn);
    await until('no failure shown any more', async () => (await alerts.count()) === 0, 30_000);
    assert.deepEqual(errors, []);
  });

  test('a page whose script fails to load says so and tries again; navigation moves the focus to the page', async () => {
    await page.goto('/');
    await page.getByRole('row', { name: /terrain/ }).waitFor();
    await page.getByRole('link', { name: 'terrain', exact: true }).click();
    await page.getByRole('heading', { name: 'terrain', exact: true }).waitFor();
    assert.equal(await settled(page, () => document.activeElement?.id, 'main'), 'main', 'focus moves to the new page');

    await page.route('**/assets/instances-*.js', (route) => route.abort());
    await page.getByRole('link', { name: 'Instances', exact: true }).click();
    const failure = page.getByRole('alert').filter({ hasText: 'This page could not be loaded' });
    await failure.getByText("The console could not load this page's script").waitFor();
    await checkAccessibility(page, 'a page whose script failed to load');
    await screenshot(page, 'page-failed-to-load');
    await page.unroute('**/assets/instances-*.js');
    await failure.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('heading', { name: 'Instances', exact: true }).waitFor();
    assert.deepEqual(errors, []);
  });
});
