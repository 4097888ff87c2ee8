/**
 * The console's operator pages in Chromium against a real Steward with access control, QGIS Server
 * with the monitoring plugin, and MapProxy: the health of every project, the settings in effect,
 * Steward's own log and an instance's log read on from cursors, the cache's disk use and seeding
 * of an area, and the API reader's Authorize button.
 */
import assert from 'node:assert/strict';
import { copyFileSync, renameSync } from 'node:fs';
import { join, relative } from 'node:path';

import { type Page } from 'playwright-core';

import { asked, checkAccessibility, screenshot } from './support/browser.js';
import { type CacheStack, startCacheStack } from './support/cache-stack.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { apiCall } from './support/http.js';
import { filesUnder } from './support/mapproxy.js';
import { after, before, describe, test } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { seededLevels } from './support/seeding.js';
import { registeredIds } from './support/test-storage.js';
import { waitFor } from './support/wait.js';

const TOKEN = 'console operator pages token';

/** How wide the page's content is: wider than the viewport means a horizontal scroll. */
const pageWidth = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth);

/** The words of a table's cells the browser broke over two lines or more. */
function brokenWords(table: Element): string[] {
  const broken: string[] = [];
  const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of (node.textContent ?? '').matchAll(/\S+/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      if (range.getClientRects().length > 1) broken.push(word[0]);
    }
  }
  return broken;
}

describe('web console: the operator pages', () => {
  let run: ConsoleRun<CacheStack>;
  let cs: CacheStack;
  let page: Page;
  let errors: string[];
  let demo: string;
  const call = (method: string, path: string, body?: unknown) => apiCall(cs.stack.api.url, method, path, body, TOKEN);

  before(async () => {
    run = await startConsoleRun(
      'console-operator-pages',
      (data) => startCacheStack({ apiToken: TOKEN, dataRoots: [data], logLevel: 'info' }),
      (server) => server.stack.api.url,
    );
    ({ server: cs, page, errors, demo } = run);
    await page.context().addInitScript((token) => sessionStorage.setItem('steward.token', token), TOKEN);
    for (const name of ['town', 'terrain']) {
      assert.equal((await call('POST', '/api/projects', { name, author: 'Ada Lovelace' })).status, 201);
      const layer = { datasource: `${join(demo, 'town.gpkg')}|layername=districts`, name: 'districts', type: 'vector' };
      assert.equal((await call('POST', `/api/projects/${name}/layers`, layer)).status, 201);
    }
    const copy = join(demo, 'moving.gpkg');
    copyFileSync(join(demo, 'town.gpkg'), copy);
    const moving = { datasource: `${copy}|layername=districts`, name: 'moving', type: 'vector' };
    assert.equal((await call('POST', '/api/projects/terrain/layers', moving)).status, 201);
    renameSync(copy, `${copy}.away`);
  });

  after(() => run?.close());

  test('health: every project with its status and the reasons of its troubled layers, filtered', async () => {
    const checks = (await call('GET', '/api/checks')).body as Record<string, { status: string }>;
    assert.equal(checks['town']?.status, 'ok');
    assert.notEqual(checks['terrain']?.status, 'ok');
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Health' }).click();
    const table = page.getByRole('table', { name: 'Projects and their checks' });
    await table.waitFor({ timeout: 60_000 });
    const row = (name: string) => table.getByRole('row').filter({ has: page.getByRole('link', { name, exact: true }) });
    assert.match(await row('town').innerText(), /ok[\s\S]*1 of 1 layer ok/);
    const troubled = await row('terrain').innerText();
    assert.match(troubled, new RegExp(`${checks['terrain']?.status}[\\s\\S]*1 of 2 layers ok`));
    const problems = page.getByRole('list', { name: 'Layers with problems in terrain' });
    assert.match(await problems.innerText(), /moving\s+broken[\s\S]*datasource: .+/);
    const summary = await page.getByTestId('health-summary').innerText();
    assert.equal(
      summary,
      checks['terrain']?.status === 'broken' ? '1 broken, 0 degraded, 1 ok' : '0 broken, 1 degraded, 1 ok',
    );
    await checkAccessibility(page, 'the health page');
    await screenshot(page, 'health');

    await page.getByLabel('Show').selectOption('troubled');
    assert.equal(await table.getByRole('link').count(), 1);
    await row('terrain').waitFor();
    await page.getByLabel('Show').selectOption('ok');
    assert.equal(await table.getByRole('link').count(), 1);
    await row('town').getByRole('link', { name: 'town' }).click();
    await page.waitForURL(/\/projects\/town$/);
    assert.deepEqual(errors, []);
  });

  test('server settings: what this Steward runs with, and never its token', async () => {
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Server' }).click();
    const facts = page.getByRole('region', { name: 'Projects and data' });
    await facts.waitFor();
    assert.match(await facts.innerText(), new RegExp(`Projects folder\\s+${cs.stack.projectsDir}`));
    assert.match(await facts.innerText(), new RegExp(`Data folders\\s+${demo}`));
    const cache = await page.getByRole('region', { name: 'Tile cache' }).innerText();
    assert.match(cache, new RegExp(`MapProxy\\s+on[\\s\\S]*MapProxy projects folder\\s+${cs.configDir}`));
    assert.match(await page.getByRole('region', { name: 'Limits' }).innerText(), /JSON body\s+1 MiB/);
    assert.match(
      await page.getByRole('region', { name: 'Object storage and access' }).innerText(),
      /API token required\s+yes/,
    );
    assert.ok(!(await page.content()).includes(TOKEN), 'the token is not on the page');
    const qgis = await page.getByRole('region', { name: 'QGIS Server' }).innerText();
    assert.match(qgis, /Public OWS address\s+not set: projects’ service URLs are on the URL above/);
    await checkAccessibility(page, 'the server settings page');
    await screenshot(page, 'server-settings');

    // Without the public address, the Services tab says its URLs are the internal ones, and how to fix it.
    await page.goto('/projects/town/services');
    const urls = page.getByRole('region', { name: 'Service URLs' });
    await urls.getByText(/internal address \(STEWARD_QGISSERVER_URL\)/).waitFor();
    assert.match(await urls.innerText(), /Set STEWARD_PUBLIC_OWS_URL to the address they use/);
    const wms = await urls.getByRole('link', { name: /SERVICE=WMS/ }).getAttribute('href');
    assert.ok(wms?.startsWith(cs.stack.qgis.url), wms ?? 'no link');
    await checkAccessibility(page, 'the services page with the internal address');
    assert.deepEqual(errors, []);
  });

  test("Steward's log: lines followed from a cursor, newest first, filtered by level", async () => {
    const reads = asked(page, '/api/log');
    await page.goto('/server/log');
    const lines = page.getByRole('region', { name: 'Log lines' });
    await lines.getByText(/^Server listening at http:/).waitFor();
    assert.equal(await page.getByLabel('Levels').inputValue(), 'info');
    // A request the page has not seen: it comes in with the next read, at the top.
    assert.equal((await call('GET', '/api/projects/not-there')).status, 404);
    const fresh = lines.getByRole('row').filter({ hasText: '/api/projects/not-there' }).first();
    await fresh.waitFor({ timeout: 15_000 });
    const first = await lines.getByRole('row').nth(1).innerText();
    assert.match(first, /not-there|request completed/, 'the newest line is on top');
    const sinces = reads.map((url) => Number(url.searchParams.get('since')));
    assert.equal(sinces[0], 0, 'the first read takes every line kept');
    assert.ok(sinces.length >= 2 && sinces.slice(1).every((since) => since > 0), `read from ${sinces.join(', ')}`);
    await checkAccessibility(page, "Steward's log");
    await screenshot(page, 'steward-log');

    await page.getByLabel('Levels').selectOption('warn');
    await page.waitForFunction(() => !document.body.innerText.includes('Server listening at'));
    const levels = await lines
      .getByRole('cell')
      .filter({ hasText: /^(trace|debug|info|warn|error|fatal)$/ })
      .allInnerTexts()
      .catch(() => []);
    assert.ok(
      levels.every((level) => ['warn', 'error', 'fatal'].includes(level)),
      levels.join(', '),
    );
    assert.deepEqual(errors, []);
  });

  test("an instance's log: new lines only after the first read, appended", async () => {
    // The stack started once an instance had registered.
    const [id = ''] = await registeredIds(call);
    const path = `/api/instances/${id}/logs`;
    const reads = asked(page, path);
    await page.goto(`/instances/${encodeURIComponent(id)}`);
    const log = page.getByRole('log', { name: `Log of instance ${id}` });
    await waitFor(
      () => 'the log to show lines',
      async () => (await log.innerText()).trim() !== '',
    );
    const before = (await log.innerText()).split('\n');
    const cursor = ((await call('GET', path)).body as { next: number }).next;
    // A project of its own, so that its MAP names only the request made here.
    assert.equal((await call('POST', '/api/projects', { name: 'followed', author: 'Ada Lovelace' })).status, 201);
    const map = encodeURIComponent(cs.qgsFile('followed'));
    const served = (line: string): boolean => line.includes('REQUEST:GetCapabilities') && line.includes('followed');
    const headers = { authorization: `Bearer ${TOKEN}` };
    // Requests until this instance serves one (the pool shares them out).
    await waitFor(
      () => 'this instance to serve a GetCapabilities',
      async () => {
        const answer = await fetch(`${cs.stack.qgis.url}?SERVICE=WMS&REQUEST=GetCapabilities&MAP=${map}`, { headers });
        assert.equal(answer.status, 200, await answer.text());
        const newer = (await call('GET', `${path}?since=${cursor}`)).body as { lines: string[] };
        return newer.lines.some(served);
      },
      30_000,
      200,
    );
    await waitFor(
      () => 'the page to show the new line',
      async () => (await log.innerText()).split('\n').some(served),
      10_000,
      200,
    );
    const shown = (await log.innerText()).split('\n');
    assert.equal(shown[0], before[0], 'the lines read before are kept');
    const sinces = reads.map((url) => url.searchParams.get('since'));
    assert.equal(sinces[0], null, 'the first read takes every line');
    assert.ok(sinces.length >= 2 && sinces.slice(1).every((since) => Number(since) > 0), sinces.join(', '));
    assert.deepEqual(errors, []);
  });

  test('cache: seeding an area typed in degrees, then the disk use of each layer; an area drawn on the map', async () => {
    // The map asks QGIS Server for its first image once it has fitted its view to the layers.
    const drawings = asked(page, '/api/projects/town/wms');
    await page.goto('/projects/town/cache');
    const usage = page.getByRole('table', { name: /^Tiles cached for each layer of town/ });
    await usage.waitFor();
    assert.equal(await page.getByTestId('usage-tiles').innerText(), '0');
    const form = page.getByRole('form', { name: 'Seed or truncate the cache' });
    await form.getByLabel('From zoom level').fill('8');
    await form.getByLabel('To zoom level').fill('10');
    await form.getByLabel('West').fill('1.40');
    await form.getByRole('button', { name: 'Seed' }).click();
    await form.getByRole('alert').getByText('“South” must be a number of degrees from -90 to 90').waitFor();
    assert.deepEqual((await call('GET', '/api/jobs?project=town')).body, [], 'nothing was sent');
    const area: [number, number, number, number] = [1.4, 43.58, 1.43, 43.61];
    const sides: Array<[string, string]> = [
      ['South', '43.58'],
      ['East', '1.43'],
      ['North', '43.61'],
    ];
    for (const [label, value] of sides) await form.getByLabel(label).fill(value);
    // The area typed is outlined on the map until the seed is done.
    const outline = form.getByTestId('map-area');
    await outline.waitFor();
    await form.getByRole('button', { name: 'Seed' }).click();
    await form.getByText('The seed job of levels 8 to 10 within 1.4, 43.58, 1.43, 43.61').waitFor();
    const row = page.getByRole('row', { name: /^seed/ });
    await row.getByText(/^succeeded/).waitFor({ timeout: 120_000 });
    // At 1280 px the jobs' table has room for its words: none is broken over two lines.
    const jobs = page.getByRole('table', { name: 'Jobs of town' });
    assert.deepEqual(await jobs.evaluate(brokenWords), [], 'words broken in the jobs table');
    await form.getByText(/succeeded: its area is cleared from the map and the form\.$/).waitFor();
    await outline.waitFor({ state: 'hidden' });
    assert.equal(await form.getByLabel('West').inputValue(), '');
    const dir = join(cs.configDir, 'cache_data', 'town', 'districts');
    const tiles = filesUnder(dir, '.png').map((file) => relative(dir, file).replace(/\.png$/, ''));
    assert.deepEqual(tiles.sort(), seededLevels(area, 8, 10), 'the tiles of the area only');
    await page.getByRole('button', { name: 'Measure again' }).click();
    await page.getByTestId('usage-tiles').getByText(tiles.length.toLocaleString('en')).waitFor();
    const measured = (await call('GET', '/api/projects/town/cache/usage')).body as { total: { bytes: number } };
    assert.ok(measured.total.bytes > 0);
    assert.match(await page.getByTestId('usage-bytes').innerText(), /^[\d.]+ (bytes|KiB|MiB)$/);
    await checkAccessibility(page, 'the cache page with its disk use');
    await screenshot(page, 'cache-usage');

    // Drawn rather than typed: Ctrl-drag around the map's centre, where the view fitted to the
    // layer puts the middle of the districts (1.43 E, 43.61 N).
    await waitFor('the map to fit the layers', () => drawings.length > 0, 30_000);
    const map = form.getByTestId('project-map');
    // The mouse reaches only what is on screen.
    await map.scrollIntoViewIfNeeded();
    const box = await map.boundingBox();
    assert.ok(box);
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    await page.mouse.move(x - 40, y - 30);
    await page.keyboard.down('Control');
    await page.mouse.down();
    await page.mouse.move(x, y, { steps: 4 });
    await page.mouse.move(x + 40, y + 30, { steps: 4 });
    await page.mouse.up();
    await page.keyboard.up('Control');
    const [west, south, east, north] = await Promise.all(
      ['West', 'South', 'East', 'North'].map(async (label) => Number(await form.getByLabel(label).inputValue())),
    );
    assert.ok(west !== undefined && south !== undefined && east !== undefined && north !== undefined);
    assert.ok(west < east && south < north, `${west}, ${south}, ${east}, ${north}`);
    assert.ok(Math.abs((west + east) / 2 - 1.43) < 0.003, `centred on ${(west + east) / 2} E`);
    assert.ok(Math.abs((south + north) / 2 - 43.61) < 0.003, `centred on ${(south + north) / 2} N`);
    assert.ok(east - west < 0.06, 'a part of the districts, as drawn');
    // The box drawn stays on the map, in its colour, where it was drawn, and follows a zoom.
    const drawn = await outline.boundingBox();
    const near = (value: number | undefined, expected: number): boolean => Math.abs((value ?? -99) - expected) <= 3;
    assert.ok(
      drawn && near(drawn.x, x - 40) && near(drawn.y, y - 30) && near(drawn.width, 80) && near(drawn.height, 60),
      `the outline spans ${JSON.stringify(drawn)} for a box drawn from ${x - 40},${y - 30} to ${x + 40},${y + 30}`,
    );
    const image = decodePng(await map.screenshot());
    const [r = 0, g = 0, b = 0] = image.pixel(Math.round(drawn.x - box.x + 1), Math.round(drawn.y - box.y + 30));
    const red = Math.abs(r - 184) + Math.abs(g - 50) + Math.abs(b - 50) <= 24;
    assert.ok(red, `the outline's edge is drawn in red: ${r},${g},${b}`);
    await screenshot(page, 'cache-area-drawn');
    await map.locator('.ol-zoom-in').click();
    await waitFor('the outline to grow with the zoom', async () => near((await outline.boundingBox())?.width, 160));
    await form.getByRole('button', { name: 'Clear the area' }).click();
    await outline.waitFor({ state: 'hidden' });
    assert.equal(await form.getByLabel('North').inputValue(), '');
    assert.deepEqual(errors, []);
  });

  test("cache: the map draws the layers in the project's drawing order, not the listing's", async () => {
    assert.equal((await call('POST', '/api/projects', { name: 'ordered', author: 'Ada Lovelace' })).status, 201);
    for (const name of ['districts', 'roads', 'places']) {
      const layer = { datasource: `${join(demo, 'town.gpkg')}|layername=${name}`, name, type: 'vector' };
      assert.equal((await call('POST', '/api/projects/ordered/layers', layer)).status, 201);
    }
    // The listing follows the tree, top first; the project's own drawing order differs from it.
    const tree = (await call('GET', '/api/projects/ordered/tree')).body as { children: unknown[] };
    const order = ['roads', 'districts', 'places'];
    assert.equal((await call('PUT', '/api/projects/ordered/tree', { children: tree.children, order })).status, 200);
    assert.deepEqual((await call('GET', '/api/projects/ordered/layers')).body, ['districts', 'roads', 'places']);
    const drawings = asked(page, '/api/projects/ordered/wms');
    await page.goto('/projects/ordered/cache');
    await waitFor('the map to be drawn', () => drawings.length > 0, 30_000);
    assert.deepEqual(
      [...new Set(drawings.map((url) => url.searchParams.get('layers')))],
      ['places,districts,roads'],
      'bottom first, in the drawing order',
    );
    assert.deepEqual(errors, []);
  });

  test('the new pages fit a 390 px phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const [path, role, ready] of [
        ['/checks', 'table', 'Projects and their checks'],
        ['/server', 'region', 'Projects and data'],
        ['/server/log', 'region', 'Log lines'],
        ['/projects/town/cache', 'form', 'Seed or truncate the cache'],
        ['/projects/town/services', 'region', 'Service URLs'],
      ] as const) {
        await page.goto(path);
        await page.getByRole(role, { name: ready }).waitFor({ timeout: 60_000 });
        assert.ok((await pageWidth(page)) <= 390, `${path} is ${await pageWidth(page)} px wide`);
        await screenshot(page, `390${path.replaceAll('/', '-')}`);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });

  test("/docs: the reader loads the description with a token set, and its Authorize button's token is sent", async () => {
    await page.goto('/docs');
    const authorize = page.locator('.auth-wrapper button.authorize');
    await authorize.waitFor({ timeout: 30_000 });
    await authorize.click();
    const modal = page.locator('.modal-ux');
    await modal.locator('input').first().fill(TOKEN);
    await modal.getByRole('button', { name: 'Apply credentials' }).click();
    await modal.getByRole('button', { name: 'Close', exact: true }).click();
    const operation = page.locator('.opblock').filter({ has: page.locator('[data-path="/api/whoami"]') });
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.getByRole('button', { name: 'Execute' }).click();
    const status = operation.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor();
    assert.equal((await status.innerText()).trim(), '200');
    assert.match(await operation.locator('.live-responses-table .microlight').first().innerText(), /"admin": true/);
    await screenshot(page, 'docs-authorized');
  });
});
