/**
 * The layer tree panel and the layer properties dialog in Chromium, against a real Steward and
 * QGIS Server: order by keyboard and by drag and drop, groups, default visibility, and what QGIS
 * Server publishes of a layer, each checked on the map, in the page and in the API's state.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { type Page } from 'playwright-core';

import { centreWhen, checkAccessibility, screenshot, settled } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';
import { names, type TreeNode as Node } from './support/tree-names.js';
import { until } from './support/wait.js';

describe('web console: the layer tree and layer properties', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  let demo: string;
  const tree = async () => ((await stack.call('GET', '/api/projects/town/tree')).body as { children: Node[] }).children;
  const focused = (expected: string) =>
    settled(page, () => document.activeElement?.getAttribute('aria-label'), expected);

  before(async () => {
    run = await startConsoleRun(
      'console-tree',
      (data) => startStack({ dataRoots: [data] }),
      (server) => server.api.url,
    );
    ({ server: stack, page, errors, demo } = run);
    assert.equal((await stack.call('POST', '/api/projects', { name: 'town', author: 'Ada' })).status, 201);
    const layers = [
      { datasource: join(demo, 'elevation.tif'), name: 'elevation', type: 'raster' },
      { datasource: `${join(demo, 'town.gpkg')}|layername=districts`, name: 'districts', type: 'vector' },
      { datasource: `${join(demo, 'town.gpkg')}|layername=roads`, name: 'roads', type: 'vector' },
    ];
    for (const layer of layers)
      assert.equal((await stack.call('POST', '/api/projects/town/layers', layer)).status, 201);
  });

  after(() => run?.close());

  test('the keyboard moves a layer down, the map draws it below, and the focus stays on its button', async () => {
    await page.goto('/projects/town');
    const panel = page.getByRole('region', { name: 'Layer tree' });
    await panel.getByTestId('tree-layer-elevation').waitFor();
    assert.deepEqual(names(await tree()), ['elevation', 'districts', 'roads'], 'a new layer goes to the bottom');
    const map = page.getByTestId('project-map');
    await page.getByLabel('roads visible on the map').uncheck();
    // The raster is grey, white at its centre (the town's hill); the districts are coloured.
    const grey = ([r = 0, g = 0, b = 0]: number[]) => r === g && g === b;
    const over = await centreWhen(map, 'the grey raster on top', grey);

    const down = panel.getByRole('button', { name: 'Move elevation down' });
    await down.click();
    await panel.getByRole('status').getByText('elevation moved down.').waitFor();
    assert.equal(await focused('Move elevation down'), 'Move elevation down');
    await page.keyboard.press('Enter');
    await until('elevation at the bottom', async () => names(await tree())[2] === 'elevation');
    assert.deepEqual(names(await tree()), ['districts', 'roads', 'elevation']);
    const last = panel.locator('ul.tree > li').last();
    await until(
      'the panel to show elevation at the bottom',
      async () => (await last.getAttribute('data-testid')) === 'tree-layer-elevation',
    );
    assert.equal(await focused('Move elevation down'), 'Move elevation down', 'the focus stays on the moved layer');
    const under = await centreWhen(map, 'the districts over the raster', (pixel) => !grey(pixel));
    assert.notDeepEqual(under, over);
    const listed = await page.getByRole('region', { name: 'Layers' }).locator('li strong').allInnerTexts();
    assert.deepEqual(listed, ['districts', 'roads', 'elevation'], 'the layer list follows the tree');
    await checkAccessibility(page, 'the layer tree');
    await screenshot(page, 'layer-tree');
    assert.deepEqual(errors, []);
  });

  test('groups: one added, a layer dragged into it, hidden by default, then dissolved', async () => {
    const panel = page.getByRole('region', { name: 'Layer tree' });
    await panel.getByLabel('New group').fill('Base');
    await panel.getByRole('button', { name: 'Add group' }).click();
    await panel.getByTestId('tree-group-Base').waitFor();
    // The panel shows the group as it sends it: the project has it once the PUT is answered.
    const expected = ['Base[]', 'districts', 'roads', 'elevation'];
    let seen: string[] = [];
    await until(
      () => `the project's tree to hold the group (last ${JSON.stringify(seen)})`,
      async () => JSON.stringify((seen = names(await tree()))) === JSON.stringify(expected),
      10_000,
    );

    await panel.getByLabel('New group').fill('Base');
    await panel.getByRole('button', { name: 'Add group' }).click();
    await panel.getByRole('alert').getByText('There is a group named “Base” already.').waitFor();

    await panel.getByTestId('tree-layer-districts').dragTo(panel.getByTestId('tree-group-Base'));
    await panel.getByRole('status').getByText('districts moved into group Base.').waitFor();
    assert.deepEqual(names(await tree()), ['Base[districts]', 'roads', 'elevation']);
    await panel.getByTestId('tree-layer-elevation').dragTo(panel.getByTestId('tree-layer-roads'));
    await panel.getByRole('status').getByText('elevation moved above roads.').waitFor();
    assert.deepEqual(names(await tree()), ['Base[districts]', 'elevation', 'roads']);

    await panel.getByRole('button', { name: 'Properties of group Base' }).click();
    const dialog = page.getByRole('dialog', { name: 'Group Base' });
    await dialog.getByLabel('Title (published)').fill('Base layers');
    await dialog.getByLabel('Short name (published name)').fill('base');
    await dialog.getByLabel('One layer at a time').check();
    await checkAccessibility(page, 'the group properties dialog');
    await dialog.getByRole('button', { name: 'Save the group' }).click();
    await dialog.waitFor({ state: 'detached' });
    await panel.getByRole('status').getByText('Group Base saved.').waitFor();
    const edited = (await tree())[0] as Node & { title?: string; short_name?: string; mutually_exclusive?: boolean };
    assert.deepEqual([edited.title, edited.short_name, edited.mutually_exclusive], ['Base layers', 'base', true]);
    assert.equal(
      await focused('Properties of group Base'),
      'Properties of group Base',
      'the focus goes back to the button',
    );

    await panel.getByLabel('Base visible by default').uncheck();
    await panel.getByRole('status').getByText('Base is hidden by default.').waitFor();
    const base = (await tree())[0];
    assert.equal(base?.visible, false);
    await screenshot(page, 'layer-tree-group');

    // Down out of the group's end, then the group dissolved.
    await panel.getByRole('button', { name: 'Move districts down' }).click();
    await panel.getByRole('status').getByText('districts moved down.').waitFor();
    assert.deepEqual(names(await tree()), ['Base[]', 'districts', 'elevation', 'roads']);
    await panel.getByRole('button', { name: 'Ungroup Base' }).click();
    await panel.getByRole('status').getByText('Group Base was dissolved').waitFor();
    assert.deepEqual(names(await tree()), ['districts', 'elevation', 'roads']);
    assert.deepEqual(errors, []);
  });

  test('layer properties: title, keywords and opacity saved, the focus back on the button', async () => {
    const panel = page.getByRole('region', { name: 'Layer tree' });
    const open = panel.getByRole('button', { name: 'Properties of districts' });
    await open.click();
    const dialog = page.getByRole('dialog', { name: 'Properties of districts' });
    const title = dialog.getByLabel('Title');
    await title.waitFor();
    assert.equal(await settled(page, () => document.activeElement?.closest('dialog') !== null, true), true);
    await title.fill('Town districts');
    await dialog.getByLabel('Keywords (separated by commas)').fill('town, districts');
    await dialog.getByLabel('Opacity (%)').fill('50');
    await checkAccessibility(page, 'the layer properties dialog');
    await screenshot(page, 'layer-properties');
    await dialog.getByLabel('Short name (published name)').fill('1bad name');
    await dialog.getByRole('button', { name: 'Save properties' }).click();
    await dialog
      .getByRole('alert')
      .getByText('The request was refused: “short_name” is not written as the API expects.')
      .waitFor();
    await dialog.getByLabel('Short name (published name)').fill('town_districts');
    await dialog.getByRole('button', { name: 'Save properties' }).click();
    await dialog.waitFor({ state: 'detached' });
    await until(
      () => 'the focus to go back to “Properties of districts”',
      async () => (await focused('Properties of districts')) === 'Properties of districts',
      2000,
    );
    const saved = (await stack.call('GET', '/api/projects/town/layers/districts/properties')).body as {
      title: string;
      keywords: string[];
      opacity: number;
      short_name: string;
    };
    assert.deepEqual(
      [saved.title, saved.keywords, saved.opacity, saved.short_name],
      ['Town districts', ['town', 'districts'], 0.5, 'town_districts'],
    );
    assert.deepEqual(errors, []);
  });
});
