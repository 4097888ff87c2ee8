/**
 * A broken layer fixed from the console, in Chromium against a real Steward and QGIS Server: its
 * datasource changed in place, a source of another geometry refused in words, one lacking a field
 * its style reads refused until asked again; checked in the page, the API's state and the map QGIS
 * Server draws.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

import { type Page } from 'playwright-core';

import { centreWhen, checkAccessibility, screenshot } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

const white = ([r = 0, g = 0, b = 0]: number[]) => r === 255 && g === 255 && b === 255;

describe('web console: a layer’s source changed in place', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  let demo: string;
  const layer = async () =>
    (await stack.call('GET', '/api/projects/town/layers/districts')).body as { source: string; valid: boolean };

  before(async () => {
    run = await startConsoleRun(
      'console-layer-source',
      (data) => startStack({ dataRoots: [data] }),
      (server) => server.api.url,
    );
    ({ server: stack, page, errors, demo } = run);
    mkdirSync(join(demo, 'old'));
    mkdirSync(join(demo, 'moved'));
    copyFileSync(join(demo, 'town.gpkg'), join(demo, 'old', 'town.gpkg'));
    assert.equal((await stack.call('POST', '/api/projects', { name: 'town', author: 'Ada' })).status, 201);
    const districts = {
      datasource: `${join(demo, 'old', 'town.gpkg')}|layername=districts`,
      name: 'districts',
      type: 'vector',
    };
    assert.equal((await stack.call('POST', '/api/projects/town/layers', districts)).status, 201);
    const byPopulation = {
      type: 'vector',
      name: 'by-population',
      rendering: { opacity: 1 },
      symbology: {
        type: 'graduated',
        symbol: 'fill',
        properties: { outline_style: 'no' },
        field: 'population',
        ranges: [{ lower: 0, upper: 1e9, label: 'all', colour: '#FF8000' }],
      },
    };
    const styled = await stack.call(
      'PUT',
      '/api/projects/town/styles/by-population?layer=districts&current=true',
      byPopulation,
    );
    assert.equal(styled.status, 201, JSON.stringify(styled.body));
    // The data is moved away: the layer is broken.
    renameSync(join(demo, 'old', 'town.gpkg'), join(demo, 'moved', 'town.gpkg'));
  });

  after(() => run?.close());

  test('a broken layer is pointed at its moved data; a source of lines is refused in words', async () => {
    assert.equal((await layer()).valid, false);
    await page.goto('/projects/town');
    const fix = page.getByRole('button', { name: 'Change the source of districts' });
    assert.equal(await fix.innerText(), 'Fix the source…');
    await fix.click();
    const dialog = page.getByRole('dialog', { name: 'Source of districts' });
    const source = dialog.getByLabel('New datasource');
    await source.fill(`${join(demo, 'moved', 'town.gpkg')}|layername=roads`);
    await dialog.getByRole('button', { name: 'Change the source' }).click();
    const alert = dialog.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /line/i);
    assert.match((await layer()).source, /old\/town\.gpkg/, 'refused: the layer reads what it read');
    await checkAccessibility(page, 'the source dialog after a refusal');
    await screenshot(page, 'layer-source-refused');

    await source.fill(`${join(demo, 'moved', 'town.gpkg')}|layername=districts`);
    await dialog.getByRole('button', { name: 'Change the source' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page
      .getByRole('status')
      .getByText(/^Layer districts now reads /)
      .waitFor();
    const fixed = await layer();
    assert.equal(fixed.valid, true);
    assert.match(fixed.source, /moved\/town\.gpkg/);
    assert.equal(await fix.innerText(), 'Source…');
    await centreWhen(page.getByTestId('project-map'), 'the districts drawn', (pixel) => !white(pixel));
    await screenshot(page, 'layer-source-fixed');
    assert.deepEqual(errors, []);
  });

  test('a source lacking the field its style reads is refused, naming it, then taken when asked again', async () => {
    const bare = join(demo, 'moved', 'bare.gpkg');
    execFileSync('ogr2ogr', ['-f', 'GPKG', bare, join(demo, 'moved', 'town.gpkg'), 'districts', '-select', 'name']);
    await page.getByRole('button', { name: 'Change the source of districts' }).click();
    const dialog = page.getByRole('dialog', { name: 'Source of districts' });
    await dialog.getByLabel('New datasource').fill(`${bare}|layername=districts`);
    await dialog.getByRole('button', { name: 'Change the source' }).click();
    const alert = dialog.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /"population"/);
    assert.match((await layer()).source, /moved\/town\.gpkg/, 'refused: the layer reads what it read');
    await screenshot(page, 'layer-source-fields-missing');

    await dialog.getByRole('button', { name: 'Change it all the same' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.match((await layer()).source, /moved\/bare\.gpkg/);
    assert.deepEqual(errors, []);
  });
});
