/**
 * The style editor of a project's page, in Chromium against a real Steward and QGIS Server: it
 * starts from a categorized style QGIS wrote (PyQGIS's saveNamedStyle, as Desktop saves it),
 * shows its renderer, field and categories in a form, and a colour changed there is what QGIS
 * Server draws once saved; the field is picked among the layer's fields as GDAL reads them, with
 * their types, though WFS does not publish the layer; "Classify" fills the ranges of a graduated
 * style from the layer's values, and every category of a layer of 1,200 points, past the first 500; a colour changed and not saved
 * is what the map beside the form shows, the projects folder untouched; a half-transparent class
 * colour is kept from load to save and QGIS Server blends it; a raster's minimum and maximum start
 * from its band's statistics as GDAL computes them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import gdal from 'gdal-async';
import { type Page } from 'playwright-core';

import { centreWhen, checkAccessibility, screenshot } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { createTownWithDistricts } from './support/demo-town.js';
import { settledFileBytes } from './support/file-tree.js';
import { after, before, describe, test } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { classedPoint, writePoints } from './support/points.js';
import { type Stack, startStack } from './support/stack.js';
import { pyqgis } from './support/style-oracle.js';

/** Within 3 of each channel: what a colour input's #rrggbb and QGIS's drawing of it give. */
const near =
  (r: number, g: number, b: number) =>
  ([pr = -1, pg = -1, pb = -1]: number[]): boolean =>
    Math.abs(pr - r) <= 3 && Math.abs(pg - g) <= 3 && Math.abs(pb - b) <= 3;

describe('web console: the style editor starts from the current style, with a form per renderer', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];

  /** The centre pixel of the districts as QGIS Server draws them (`GET .../map`). */
  const servedCentre = async (): Promise<number[]> => {
    const response = await fetch(`${stack.api.url}/api/projects/town/layers/districts/map`);
    assert.equal(response.status, 200);
    const image = decodePng(Buffer.from(await response.arrayBuffer()));
    return image.pixel(Math.floor(image.width / 2), Math.floor(image.height / 2));
  };

  /** Every file of the projects folder with its bytes. */
  const projectFiles = (): Promise<Map<string, string>> => settledFileBytes(stack.projectsDir);

  before(async () => {
    run = await startConsoleRun(
      'console-style-editor',
      (data) => startStack({ dataRoots: [data] }),
      (server) => server.api.url,
    );
    ({ server: stack, page, errors } = run);
    await createTownWithDistricts(stack, run.demo);
    // The town is 3 x 3 districts; Hill is the middle one.
    const qml = join(run.dataDir, 'desktop-districts.qml');
    const [written] = await pyqgis([
      {
        op: 'reference_classes',
        layer: { kind: 'vector', source: `${join(run.demo, 'town.gpkg')}|layername=districts` },
        renderer: 'categorized',
        symbol: 'fill',
        field: 'name',
        properties: { outline_style: 'no' },
        classes: [
          { value: 'Hill', label: 'The hill', colour: '255,128,0,255' },
          { value: '', label: 'Elsewhere', colour: '128,128,128,255' },
        ],
        opacity: 1,
        save: qml,
      },
    ]);
    assert.equal(written?.ok, true, written?.message);
    const upload = await fetch(`${stack.api.url}/api/projects/town/styles/desktop/qml`, {
      method: 'PUT',
      headers: { 'content-type': 'application/xml' },
      body: readFileSync(qml, 'utf8'),
    });
    assert.equal(upload.status, 201);
    const applied = await stack.call('POST', '/api/projects/town/layers/districts/style', {
      name: 'desktop',
      current: true,
    });
    assert.equal(applied.status, 200);
  });

  after(() => run?.close());

  test('edits the categorized style QGIS wrote, and QGIS Server draws the new colour', async () => {
    assert.ok(near(255, 128, 0)(await servedCentre()), 'QGIS Server draws the hill orange first');
    await page.goto('/projects/town');
    const map = page.getByTestId('project-map');
    await centreWhen(map, 'orange', near(255, 128, 0));
    await page.getByRole('button', { name: 'Edit the style of districts' }).click();
    const editor = page.getByRole('form', { name: 'Style editor for districts' });
    await editor.waitFor();
    assert.equal(await editor.getByLabel('Style name').inputValue(), 'desktop');
    assert.equal(await editor.getByLabel('Renderer').inputValue(), 'categorized');
    assert.equal(await editor.getByLabel('Field').inputValue(), 'name');
    assert.equal(await editor.getByLabel('Value of category 1').inputValue(), 'Hill');
    assert.equal(await editor.getByLabel('Colour of The hill').inputValue(), '#ff8000');
    assert.equal(await editor.getByLabel('Draw the other values').isChecked(), true);
    assert.equal(await editor.getByLabel('Colour of the other values').inputValue(), '#808080');
    await screenshot(page, 'style-editor-desktop-categorized');
    await checkAccessibility(page, 'the style editor of a categorized style');

    await editor.getByLabel('Colour of The hill').fill('#00a000');
    await editor.getByRole('button', { name: 'Make current style' }).click();
    await editor.getByRole('status').getByText('“desktop” is now the current style of districts.').waitFor();
    assert.ok(
      near(0, 160, 0)(await servedCentre()),
      `QGIS Server draws the hill green (${(await servedCentre()).join(',')})`,
    );
    await centreWhen(map, 'green', near(0, 160, 0));
    await screenshot(page, 'style-editor-hill-green');
    const style = (await stack.call('GET', '/api/projects/town/styles/desktop')).body as {
      symbology: { type: string; field: string; categories: unknown[]; other: unknown };
    };
    assert.equal(style.symbology.type, 'categorized', 'the style is now Steward JSON');
    assert.deepEqual(style.symbology.categories, [{ value: 'Hill', label: 'The hill', colour: '#00A000' }]);
    assert.deepEqual(style.symbology.other, { label: 'Elsewhere', colour: '#808080' });
    assert.deepEqual(errors, []);
  });

  test('classifies the population into equal ranges, drawn on the map unsaved', async () => {
    const editor = page.getByRole('form', { name: 'Style editor for districts' });
    assert.equal(await editor.getByRole('button', { name: 'Preview on the map' }).count(), 0);
    await editor.getByLabel('Style name').fill('by-population');
    await editor.getByLabel('Renderer').selectOption('graduated');
    await editor.getByLabel('Field').selectOption('population');
    await editor.getByLabel('Number of ranges').fill('3');
    await editor.getByRole('button', { name: 'Classify' }).click();
    // The districts hold 1000 to 7000: three ranges of 2000.
    assert.equal(await editor.getByLabel('Lower bound of range 1').inputValue(), '1000');
    assert.equal(await editor.getByLabel('Upper bound of range 2').inputValue(), '5000');
    assert.equal(await editor.getByLabel('Upper bound of range 3').inputValue(), '7000');
    // The hill (4000) is in the middle range, halfway along the ramp.
    await centreWhen(page.getByTestId('project-map'), 'the middle range', near(222, 128, 108));
    await screenshot(page, 'style-editor-graduated-draft');
    const stored = await stack.call('GET', '/api/projects/town/styles/by-population');
    assert.equal(stored.status, 404, 'the draft drawn is not stored');
    const layer = (await stack.call('GET', '/api/projects/town/layers/districts')).body as { current_style: string };
    assert.equal(layer.current_style, 'desktop');
    assert.deepEqual(errors, []);
  });

  test('picks the field among those of the layer with their types, numbers only for ranges', async () => {
    const gpkg = join(run.demo, 'places.gpkg');
    writePoints(gpkg, 1200, classedPoint);
    assert.equal((await stack.call('POST', '/api/projects', { name: 'survey', author: 'Ada' })).status, 201);
    const places = { type: 'vector', name: 'places', datasource: `${gpkg}|layername=places` };
    assert.equal((await stack.call('POST', '/api/projects/survey/layers', places)).status, 201);
    const features = await stack.call('GET', '/api/projects/survey/layers/places/features');
    assert.equal(features.status, 409, 'WFS does not publish the layer');
    await page.goto('/projects/survey');
    await page.getByRole('button', { name: 'Edit the style of places' }).click();
    const editor = page.getByRole('form', { name: 'Style editor for places' });
    await editor.waitFor();
    const options = () =>
      editor
        .getByLabel('Field')
        .locator('option:not([disabled])')
        .evaluateAll((items) => items.map((item) => item.textContent));
    await editor.getByLabel('Renderer').selectOption('categorized');
    await editor.getByLabel('Field').locator('option', { hasText: 'kind' }).waitFor({ state: 'attached' });
    // As the API lists them from the GeoPackage: the key column, then GDAL's fields.
    const fields = (await stack.call('GET', '/api/projects/survey/layers/places/fields')).body as Array<{
      name: string;
      type: string;
    }>;
    assert.deepEqual(await options(), ['fid (integer)', 'kind (string)', 'height (real)']);
    assert.deepEqual(
      fields.map((field) => `${field.name} (${field.type})`),
      await options(),
    );
    await editor.getByLabel('Renderer').selectOption('graduated');
    assert.deepEqual(await options(), ['fid (integer)', 'height (real)'], 'no text field to grade');
    await screenshot(page, 'style-editor-field-picker');
    assert.deepEqual(errors, []);
  });

  test('classifies every category of a layer of 1,200 points, past the first 500', async () => {
    await page.goto('/projects/survey');
    await page.getByRole('button', { name: 'Edit the style of places' }).click();
    const editor = page.getByRole('form', { name: 'Style editor for places' });
    await editor.waitFor();
    await editor.getByLabel('Renderer').selectOption('categorized');
    // Not published by WFS: "Classify" reads every feature all the same.
    await editor.getByLabel('Field').selectOption('kind');
    await editor.getByRole('button', { name: 'Classify' }).click();
    await editor.getByLabel('Value of category 12').waitFor();
    const values = await editor
      .getByLabel(/^Value of category \d+$/)
      .evaluateAll((inputs) => inputs.map((input) => (input as HTMLInputElement).value));
    const kinds = Array.from({ length: 12 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    assert.deepEqual(values, kinds, 'the 7 kinds past the 500th point too');
    await screenshot(page, 'style-editor-every-category');
    await checkAccessibility(page, 'the style editor with its opacities');
    assert.deepEqual(errors, []);
  });

  test('draws a colour changed in the form on the map before it is saved, writing nothing', async () => {
    await page.goto('/projects/town');
    const map = page.getByTestId('project-map');
    // The current style is "desktop", the hill green since the first test.
    await centreWhen(map, 'green', near(0, 160, 0));
    const before = await projectFiles();
    await page.getByRole('button', { name: 'Edit the style of districts' }).click();
    const editor = page.getByRole('form', { name: 'Style editor for districts' });
    await editor.waitFor();
    const previews: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/style-preview')) previews.push(request.method());
    });
    await editor.getByLabel('Colour of The hill').fill('#0000c0');
    await centreWhen(map, 'blue, the unsaved colour', near(0, 0, 192));
    await screenshot(page, 'style-editor-live-preview');
    assert.ok(previews.length > 0 && previews.every((method) => method === 'POST'), previews.join(','));
    assert.ok(near(0, 160, 0)(await servedCentre()), 'QGIS Server still draws the stored style green');
    assert.deepEqual(await projectFiles(), before, 'every file of the projects folder is byte-identical');
    const layer = (await stack.call('GET', '/api/projects/town/layers/districts')).body as { current_style: string };
    assert.equal(layer.current_style, 'desktop');
    assert.deepEqual(errors, []);
  });

  test('keeps a class colour half transparent from the form to QGIS Server, which blends it', async () => {
    await page.goto('/projects/town');
    await page.getByRole('button', { name: 'Edit the style of districts' }).click();
    const editor = page.getByRole('form', { name: 'Style editor for districts' });
    await editor.waitFor();
    assert.equal(await editor.getByLabel('Opacity of The hill (%)').inputValue(), '100');
    await editor.getByLabel('Colour of The hill').fill('#0000c0');
    await editor.getByLabel('Opacity of The hill (%)').fill('50');
    await editor.getByRole('button', { name: 'Make current style' }).click();
    await editor.getByRole('status').getByText('“desktop” is now the current style of districts.').waitFor();
    const style = (await stack.call('GET', '/api/projects/town/styles/desktop')).body as {
      symbology: { categories: Array<{ colour: string }> };
    };
    assert.equal(style.symbology.categories[0]?.colour, '0,0,192,128');
    // Half of #0000c0 over the white the map is seen on: QGIS Server drew it blended.
    const [r = 0, g = 0, b = 0, a = 255] = await servedCentre();
    const overWhite = [r, g, b].map((channel) => Math.round((channel * a) / 255 + 255 * (1 - a / 255)));
    assert.ok(near(127, 127, 223)(overWhite), `blended: ${[r, g, b, a].join(',')} is ${overWhite.join(',')} on white`);
    await page.reload();
    await page.getByRole('button', { name: 'Edit the style of districts' }).click();
    assert.equal(await editor.getByLabel('Opacity of The hill (%)').inputValue(), '50', 'the alpha is kept on load');
    assert.equal(await editor.getByLabel('Colour of The hill').inputValue(), '#0000c0');
    await screenshot(page, 'style-editor-half-transparent');
    assert.deepEqual(errors, []);
  });

  test("starts a raster's minimum and maximum from its band's statistics, for each renderer", async () => {
    const elevation = join(run.demo, 'elevation.tif');
    assert.equal((await stack.call('POST', '/api/projects', { name: 'terrain', author: 'Ada' })).status, 201);
    const layer = { type: 'raster', name: 'elevation', datasource: elevation };
    assert.equal((await stack.call('POST', '/api/projects/terrain/layers', layer)).status, 201);
    const exact = gdal.open(elevation).bands.get(1).computeStatistics(false);
    assert.ok(exact.min < exact.max, `the demo elevation varies (${exact.min} to ${exact.max})`);
    await page.goto('/projects/terrain');
    await page.getByRole('button', { name: 'Edit the style of elevation' }).click();
    const editor = page.getByRole('form', { name: 'Style editor for elevation' });
    await editor.waitFor();
    const limits = async (): Promise<number[]> => [
      Number(await editor.getByLabel('Minimum', { exact: true }).inputValue()),
      Number(await editor.getByLabel('Maximum', { exact: true }).inputValue()),
    ];
    assert.equal(await editor.getByLabel('Renderer').inputValue(), 'singlebandpseudocolor');
    assert.deepEqual(await limits(), [exact.min, exact.max]);
    await editor.getByLabel('Renderer').selectOption('singlebandgray');
    assert.deepEqual(await limits(), [exact.min, exact.max]);
    await screenshot(page, 'style-editor-raster-statistics');
    assert.deepEqual(errors, []);
  });
});
