/**
 * The console as an operator lives in it, in Chromium against a real Steward, QGIS Server and
 * MapProxy: pages fit a 390 px phone, refusals read as sentences, dialogs take the focus and give
 * it back, yes/no settings are checkboxes, and seeding tells its tiles.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { type Page } from 'playwright-core';

import { checkAccessibility, screenshot, settled } from './support/browser.js';
import { type CacheStack, startCacheStack } from './support/cache-stack.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';

/** How wide the page's content is: wider than the viewport means a horizontal scroll. */
const pageWidth = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth);

/** Ids that more than one element of the page has. */
const duplicateIds = (page: Page): Promise<string[]> =>
  page.evaluate(() => {
    const ids = [...document.querySelectorAll('[id]')].map((element) => element.id);
    return ids.filter((id, index) => ids.indexOf(id) !== index);
  });

/** The accessible label of the focused element. */
const focusedLabel = (): string | null | undefined => document.activeElement?.getAttribute('aria-label');

describe('web console: an operator’s day', () => {
  let run: ConsoleRun<CacheStack>;
  let cs: CacheStack;
  let page: Page;
  let errors: string[];
  let demo: string;
  const call = (method: string, path: string, body?: unknown) => apiCall(cs.stack.api.url, method, path, body);

  before(async () => {
    run = await startConsoleRun(
      'console-operator',
      (data) => startCacheStack({ dataRoots: [data] }),
      (server) => server.stack.api.url,
    );
    ({ server: cs, page, errors, demo } = run);
    for (const name of ['town', 'a-project-with-a-rather-long-name-for-a-phone-screen']) {
      assert.equal((await call('POST', '/api/projects', { name, author: 'Ada Lovelace' })).status, 201);
    }
    for (const layer of ['districts', 'roads']) {
      const body = { datasource: `${join(demo, 'town.gpkg')}|layername=${layer}`, name: layer, type: 'vector' };
      assert.equal((await call('POST', '/api/projects/town/layers', body)).status, 201);
    }
  });

  after(() => run?.close());

  test('the projects, project and cache pages fit a 390 px wide phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto('/');
      await page.getByRole('link', { name: 'town', exact: true }).waitFor();
      assert.ok((await pageWidth(page)) <= 390, `the projects page is ${await pageWidth(page)} px wide`);
      const name = page.getByRole('link', { name: 'town', exact: true });
      assert.ok(await name.isVisible());
      await page.getByLabel('Pin project town').waitFor();
      await checkAccessibility(page, 'the projects page at 390 px');
      await screenshot(page, 'projects-390');

      await page.goto('/projects/town');
      await page.getByTestId('project-map').waitFor();
      const map = await page.getByTestId('project-map').boundingBox();
      assert.ok(map && map.width >= 300, `the map is ${map?.width} px wide`);
      assert.ok((await pageWidth(page)) <= 390, `the project page is ${await pageWidth(page)} px wide`);
      await screenshot(page, 'project-390');

      await page.goto('/projects/town/cache');
      await page.getByRole('form', { name: 'Seed or truncate the cache' }).waitFor();
      assert.ok((await pageWidth(page)) <= 390, `the cache page is ${await pageWidth(page)} px wide`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    assert.deepEqual(errors, []);
  });

  test('a dialog takes the focus, is named by its own title, and gives the focus back', async () => {
    await page.goto('/');
    const remove = page.getByRole('button', { name: 'Delete project town' });
    await remove.click();
    const dialog = page.getByRole('dialog', { name: 'Delete project “town”?' });
    await dialog.getByText('2 layers: districts, roads').waitFor();
    // The focus moves in an effect after the render, and goes back in the commit after the dialog
    // leaves the page: each is waited for, then judged.
    const title = await dialog.getAttribute('aria-labelledby');
    const focusedDialog = (): string | null | undefined =>
      document.activeElement?.closest('dialog')?.getAttribute('aria-labelledby') ?? document.activeElement?.outerHTML;
    assert.equal(await settled(page, focusedDialog, title ?? ''), title, 'focus moves into the dialog');
    assert.deepEqual(await duplicateIds(page), [], 'the token dialog and this one have ids of their own');
    const opener = 'Delete project town';
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await settled(page, focusedLabel, opener), opener, 'Escape gives the focus back to the opener');
    await remove.click();
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await settled(page, focusedLabel, opener), opener, 'Keep it gives the focus back to the opener');
    assert.deepEqual((await call('GET', '/api/projects')).body, [
      'a-project-with-a-rather-long-name-for-a-phone-screen',
      'town',
    ]);
    assert.deepEqual(errors, []);
  });

  test('a request the API refuses reads as a sentence, not as schema text or a code', async () => {
    await page.goto('/projects/town');
    await page.getByRole('button', { name: 'Add layer' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a layer' });
    await dialog.getByLabel('Datasource').fill(`${join(demo, 'town.gpkg')}|layername=places`);
    await dialog.getByLabel('Layer name').fill('places');
    await dialog.getByLabel('CRS').fill('somewhere');
    await dialog.getByRole('button', { name: 'Add layer' }).click();
    const alert = dialog.getByRole('alert');
    await alert.waitFor();
    const said = await alert.innerText();
    assert.equal(said, 'The request was refused: “crs” is not written as the API expects.');
    await checkAccessibility(page, 'a refused layer');
    await screenshot(page, 'refused-as-a-sentence');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual((await call('GET', '/api/projects/town/layers')).body, ['districts', 'roads']);
    assert.deepEqual(errors, []);
  });

  test('yes/no settings of a style are checkboxes, saved as QGIS writes them', async () => {
    await page.goto('/projects/town');
    await page.getByRole('button', { name: 'Edit the style of roads' }).click();
    const editor = page.getByRole('form', { name: 'Style editor for roads' });
    const custom = editor.getByRole('checkbox', { name: 'Use custom dash' });
    await custom.waitFor();
    assert.equal(await editor.getByRole('spinbutton', { name: 'Use custom dash' }).count(), 0);
    assert.equal(await custom.isChecked(), false);
    await custom.check();
    await editor.getByLabel('Customdash', { exact: true }).fill('4;4');
    await editor.getByLabel('Style name').fill('dashed');
    await editor.getByRole('button', { name: 'Make current style' }).click();
    await editor.getByText('is now the current style of roads').waitFor();
    const style = (await call('GET', '/api/projects/town/styles/dashed')).body as {
      symbology: { properties: Record<string, unknown> };
    };
    assert.equal(Number(style.symbology.properties['use_custom_dash']), 1);
    assert.equal(style.symbology.properties['customdash'], '4;4');
    await page.reload();
    await page.getByRole('button', { name: 'Edit the style of roads' }).click();
    assert.equal(await editor.getByRole('checkbox', { name: 'Use custom dash' }).isChecked(), true, 'read back');
    await checkAccessibility(page, 'the style editor with checkboxes');
    assert.deepEqual(errors, []);
  });

  test('seeding tells the tiles it made, not percent points', async () => {
    await page.goto('/projects/town/cache');
    const form = page.getByRole('form', { name: 'Seed or truncate the cache' });
    await form.getByLabel('From zoom level').fill('0');
    await form.getByLabel('To zoom level').fill('3');
    await form.getByRole('button', { name: 'Seed' }).click();
    const row = page.getByRole('row', { name: /^seed/ });
    await row.getByText(/^succeeded/).waitFor({ timeout: 120_000 });
    const jobs = (await call('GET', '/api/jobs?project=town')).body as { result?: { tiles?: number } }[];
    const tiles = jobs[0]?.result?.tiles;
    assert.ok(typeof tiles === 'number' && tiles > 0, JSON.stringify(jobs));
    await row.getByText(`100%: ${tiles.toLocaleString('en')} tile${tiles === 1 ? '' : 's'} seeded`).waitFor();
    await screenshot(page, 'seeded-tiles');
    assert.deepEqual(errors, []);
  });
});
