/**
 * Where the add-layer dialog puts a new layer, in Chromium against a real Steward and QGIS Server:
 * on top of the layer tree, at its bottom or first in a group, checked in the API's tree, the
 * project's own drawing order and the map QGIS Server draws; and what the page says when the tree
 * changed under the dialog.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { type Page } from 'playwright-core';

import { asked, centreWhen, checkAccessibility, screenshot } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';
import { names, type TreeNode as Node } from './support/tree-names.js';
import { until } from './support/wait.js';

describe('web console: where a new layer goes', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  let demo: string;
  const tree = async () =>
    (await stack.call('GET', '/api/projects/town/tree')).body as { children: Node[]; order?: string[] };
  const putTree = async (body: { children: Node[]; order?: string[] | null }) =>
    assert.equal((await stack.call('PUT', '/api/projects/town/tree', body)).status, 200);

  /** Fills the add-layer dialog with `layer` of the demo data and leaves it open. */
  const fillDialog = async (datasource: string, name: string, type: 'vector' | 'raster') => {
    await page.getByRole('button', { name: 'Add layer' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a layer' });
    await dialog.getByLabel('Datasource', { exact: true }).fill(datasource);
    await dialog.getByLabel('Layer name').fill(name);
    await dialog.getByLabel('Type').selectOption(type);
    return dialog;
  };

  before(async () => {
    run = await startConsoleRun(
      'console-add-layer',
      (data) => startStack({ dataRoots: [data] }),
      (server) => server.api.url,
    );
    ({ server: stack, page, errors, demo } = run);
    assert.equal((await stack.call('POST', '/api/projects', { name: 'town', author: 'Ada' })).status, 201);
    for (const name of ['districts', 'roads']) {
      const layer = { datasource: `${join(demo, 'town.gpkg')}|layername=${name}`, name, type: 'vector' };
      assert.equal((await stack.call('POST', '/api/projects/town/layers', layer)).status, 201);
    }
    // roads on top, then group "base" holding the districts.
    await putTree({
      children: [
        { type: 'layer', name: 'roads' },
        { type: 'group', name: 'base', children: [{ type: 'layer', name: 'districts' }] },
      ],
    });
  });

  after(() => run?.close());

  test('a layer put first in a group lands there, and the map draws it above the group’s others', async () => {
    const drawings = asked(page, '/api/projects/town/wms');
    await page.goto('/projects/town');
    const dialog = await fillDialog(join(demo, 'elevation.tif'), 'elevation', 'raster');
    const place = dialog.getByLabel('Place it');
    assert.equal(await place.inputValue(), 'top', 'on top unless chosen otherwise');
    assert.deepEqual(await place.locator('option').allInnerTexts(), [
      'on top of the layer tree',
      'at the bottom of the layer tree',
      'first in group base',
    ]);
    await place.selectOption({ label: 'first in group base' });
    await checkAccessibility(page, 'the add-layer dialog with its placement');
    await screenshot(page, 'add-layer-placement');
    await dialog.getByRole('button', { name: 'Add layer' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.deepEqual(names((await tree()).children), ['roads', 'base[elevation, districts]']);
    const panel = page.getByRole('region', { name: 'Layer tree' });
    await panel.getByTestId('tree-layer-elevation').waitFor();
    // The raster is grey (white at the town's hill, its centre); the districts are coloured.
    await page.getByLabel('roads visible on the map').uncheck();
    // The map asks QGIS Server for its layers bottom first.
    await until('the map to draw the raster over the districts', () =>
      drawings.some((url) => url.searchParams.get('layers') === 'districts,elevation'),
    );
    const grey = ([r = 0, g = 0, b = 0]: number[]) => r === g && g === b;
    await centreWhen(page.getByTestId('project-map'), 'the grey raster over the districts', grey);
    await screenshot(page, 'add-layer-in-group');
    assert.deepEqual(errors, []);
  });

  test('on top and at the bottom, the project’s own drawing order following the tree', async () => {
    const drawing = ['districts', 'elevation', 'roads'];
    await putTree({ ...(await tree()), order: drawing });
    await page.goto('/projects/town');
    let dialog = await fillDialog(`${join(demo, 'town.gpkg')}|layername=places`, 'places', 'vector');
    await dialog.getByLabel('Place it').selectOption('bottom');
    await dialog.getByRole('button', { name: 'Add layer' }).click();
    await dialog.waitFor({ state: 'hidden' });
    let written = await tree();
    assert.deepEqual(names(written.children), ['roads', 'base[elevation, districts]', 'places']);
    assert.deepEqual(written.order, [...drawing, 'places'], 'drawn below the others too');

    dialog = await fillDialog(join(demo, 'elevation.tif'), 'relief', 'raster');
    await dialog.getByRole('button', { name: 'Add layer' }).click();
    await dialog.waitFor({ state: 'hidden' });
    written = await tree();
    assert.deepEqual(names(written.children), ['relief', 'roads', 'base[elevation, districts]', 'places']);
    assert.deepEqual(written.order, ['relief', ...drawing, 'places'], 'drawn above the others too');
    await page.getByRole('region', { name: 'Layer tree' }).getByTestId('tree-layer-relief').waitFor();
    assert.deepEqual(errors, []);
  });

  test('a group gone while the dialog was open: the layer is added, and the page says where it is', async () => {
    await putTree({ children: (await tree()).children, order: null });
    await page.goto('/projects/town');
    const dialog = await fillDialog(`${join(demo, 'town.gpkg')}|layername=roads`, 'tracks', 'vector');
    await dialog.getByLabel('Place it').selectOption({ label: 'first in group base' });
    // Someone dissolves the group meanwhile.
    await putTree({
      children: [
        { type: 'layer', name: 'relief' },
        { type: 'layer', name: 'roads' },
        { type: 'layer', name: 'elevation' },
        { type: 'layer', name: 'districts' },
        { type: 'layer', name: 'places' },
      ],
    });
    await dialog.getByRole('button', { name: 'Add layer' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const alert = page.getByRole('alert').filter({ hasText: 'Layer tracks was added' });
    await alert.waitFor();
    assert.equal(
      await alert.innerText(),
      'Layer tracks was added at the bottom of the layer tree, but moving it failed: ' +
        'Group base is no longer where it was in the layer tree. Move it in the layer tree below.',
    );
    assert.deepEqual(names((await tree()).children), ['relief', 'roads', 'elevation', 'districts', 'places', 'tracks']);
    await checkAccessibility(page, 'the project page after a layer could not be moved');
    await screenshot(page, 'add-layer-not-moved');
    assert.deepEqual(errors, []);
  });
});
