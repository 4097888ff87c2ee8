/**
 * A QML uploaded from a layer's style manager in Chromium against a real Steward and QGIS Server:
 * one request puts it into the project and the layer, so a style labelling a field the layer lacks
 * is refused with the field named and nothing stored, then taken when asked again, as the layer's
 * current style, which the map draws.
 */
import assert from 'node:assert/strict';

import { type Page } from 'playwright-core';

import { centreWhen, checkAccessibility, screenshot } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { createTownWithDistricts, districtsStyles } from './support/demo-town.js';
import { categorizedFillQml } from './support/fill-qml.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

/** The colour the uploaded style fills the centre district ("Hill", the middle of the town's 3 x 3) with. */
const HILL = [200, 30, 200];

describe('web console: a QML uploaded into a layer', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  const layerInfo = () => districtsStyles(stack);

  before(async () => {
    run = await startConsoleRun(
      'console-style-upload',
      (data) => startStack({ dataRoots: [data] }),
      (server) => server.api.url,
    );
    ({ server: stack, page, errors } = run);
    await createTownWithDistricts(stack, run.demo);
  });

  after(() => run?.close());

  test('a QML reading a field the layer lacks is refused naming it, then uploaded all the same as its current style', async () => {
    const before = await layerInfo();
    await page.goto('/projects/town');
    await page.getByRole('button', { name: 'Styles of districts' }).click();
    const dialog = page.getByRole('dialog', { name: 'Styles of districts' });
    await dialog.getByLabel('Style name').fill('zoned');
    await dialog.getByLabel(/^QML document or style package/).setInputFiles({
      name: 'zoned.qml',
      mimeType: 'application/xml',
      buffer: Buffer.from(categorizedFillQml('name', [{ value: 'Hill', colour: HILL }], 'zone')),
    });
    await dialog.getByRole('button', { name: 'Upload the style' }).click();
    const alert = dialog.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /layer "districts" has no field "zone"/i);
    assert.deepEqual(await layerInfo(), before, 'refused: the layer is as it was');
    assert.ok(!((await stack.call('GET', '/api/projects/town/styles')).body as string[]).includes('zoned'));
    await checkAccessibility(page, 'a style upload refused for a missing field');
    await screenshot(page, 'style-upload-fields-missing');

    await dialog.getByRole('button', { name: 'Upload it all the same' }).click();
    await dialog.getByRole('status').getByText('Style zoned uploaded.').waitFor();
    await dialog.getByTestId('style-zoned').getByText('current').waitFor();
    assert.equal(await dialog.getByRole('alert').count(), 0, 'the refusal is gone');
    const after = await layerInfo();
    assert.equal(after.current_style, 'zoned');
    assert.deepEqual(after.styles, [...before.styles, 'zoned']);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    const near = (pixel: number[]): boolean =>
      pixel.every((value, index) => Math.abs(value - (HILL[index] ?? 255)) <= 8);
    await centreWhen(page.getByTestId('project-map'), 'the uploaded style’s colour', near);
    assert.deepEqual(errors, []);
  });
});
