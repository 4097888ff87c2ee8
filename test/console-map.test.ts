/**
 * The project page's map tools in Chromium against a real Steward and QGIS Server: the legend of
 * the layers shown, the features under a point of the map (by mouse and by keyboard), a layer's
 * attribute table a page at a time through WFS, zoom to extent, and a layer's styles (switch,
 * download, upload, delete), each checked in what the browser shows and in the API's state.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { type Page } from 'playwright-core';

import { asked, centreWhen, checkAccessibility, effectsRun, screenshot, settled } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { createTownWithDistricts } from './support/demo-town.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';
import { until } from './support/wait.js';
import { fillStyle } from './support/write-bodies.js';

/** 120 points named "Point 1" to "Point 120" (fids 1 to 120), spread over `[xmin, ymin, xmax, ymax]`. */
function writePoints(path: string, [xmin, ymin, xmax, ymax]: number[]): void {
  const script = `
import sys
from osgeo import ogr, osr
srs = osr.SpatialReference(); srs.ImportFromEPSG(4326)
srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
dataset = ogr.GetDriverByName("GPKG").CreateDataSource(sys.argv[1])
layer = dataset.CreateLayer("points", srs, ogr.wkbPoint)
layer.CreateField(ogr.FieldDefn("name", ogr.OFTString))
xmin, ymin, xmax, ymax = (float(value) for value in sys.argv[2:6])
for index in range(120):
    feature = ogr.Feature(layer.GetLayerDefn())
    feature.SetField("name", f"Point {index + 1}")
    x = xmin + (xmax - xmin) * (index % 12 + 0.5) / 12
    y = ymin + (ymax - ymin) * (index // 12 + 0.5) / 10
    feature.SetGeometry(ogr.CreateGeometryFromWkt(f"POINT({x} {y})"))
    layer.CreateFeature(feature)
dataset = None
`;
  execFileSync('/usr/bin/python3', ['-c', script, path, ...[xmin, ymin, xmax, ymax].map(String)]);
}

const near = ([r = 0, g = 0, b = 0]: number[], [er, eg, eb]: number[]) =>
  Math.abs(r - (er ?? 0)) <= 8 && Math.abs(g - (eg ?? 0)) <= 8 && Math.abs(b - (eb ?? 0)) <= 8;

describe('web console: legend, feature info, attribute table, zoom and styles', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  const layerInfo = async (name: string) =>
    (await stack.call('GET', `/api/projects/town/layers/${name}`)).body as { current_style: string; styles: string[] };

  before(async () => {
    run = await startConsoleRun(
      'console-map',
      (data) => startStack({ dataRoots: [data] }),
      (server) => server.api.url,
    );
    ({ server: stack, page, errors } = run);
    const { demo } = run;
    await createTownWithDistricts(stack, demo);
    // The points cover the lower left district (Old Town) of the town's 3 x 3.
    const [xmin = 0, ymin = 0, xmax = 0, ymax = 0] = (
      (await stack.call('GET', '/api/projects/town/layers/districts')).body as { bbox: string }
    ).bbox
      .split(/[ ,]+/)
      .map(Number);
    writePoints(join(demo, 'points.gpkg'), [xmin, ymin, xmin + (xmax - xmin) / 3, ymin + (ymax - ymin) / 3]);
    const points = { datasource: `${join(demo, 'points.gpkg')}|layername=points`, name: 'points', type: 'vector' };
    assert.equal((await stack.call('POST', '/api/projects/town/layers', points)).status, 201);
    assert.equal((await stack.call('POST', '/api/projects/town/styles', fillStyle('blue', '#1E3CC8'))).status, 201);
    assert.equal((await stack.call('POST', '/api/projects/town/layers/districts/style', { name: 'blue' })).status, 200);
    // WFS publishes the points only: the districts' table says where to publish them.
    assert.equal(
      (await stack.call('PATCH', '/api/projects/town/services', { wfs: { layers: ['points'] } })).status,
      200,
    );
  });

  after(() => run?.close());

  test('the legend shows each layer drawn, and follows what the map shows', async () => {
    await page.goto('/projects/town');
    const legend = page.getByRole('region', { name: 'Legend' });
    for (const name of ['districts', 'points']) {
      const image = legend.getByRole('img', { name: `Legend of ${name}` });
      await image.waitFor();
      await until(`the legend of ${name} to load`, () =>
        image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0 && img.naturalHeight > 0),
      );
    }
    await page.getByLabel('points visible on the map').uncheck();
    await legend.getByRole('img', { name: 'Legend of points' }).waitFor({ state: 'detached' });
    assert.deepEqual(
      await legend.getByRole('img').evaluateAll((images) => images.map((image) => image.getAttribute('alt'))),
      ['Legend of districts'],
    );
    await checkAccessibility(page, 'the project page with its legend');
    await screenshot(page, 'map-legend');
    assert.deepEqual(errors, []);
  });

  test("on first load, a layer the project's tree hides is unchecked, not drawn and not in the legend", async () => {
    const tree = (await stack.call('GET', '/api/projects/town/tree')).body as { children: Array<{ name: string }> };
    const showPoints = async (visible: boolean): Promise<void> => {
      const children = tree.children.map((node) => (node.name === 'points' ? { ...node, visible } : node));
      assert.equal((await stack.call('PUT', '/api/projects/town/tree', { children })).status, 200);
    };
    await showPoints(false);
    try {
      const drawings = asked(page, '/api/projects/town/wms');
      await page.goto('/projects/town');
      const legend = page.getByRole('region', { name: 'Legend' });
      await legend.getByRole('img', { name: 'Legend of districts' }).waitFor();
      const points = page.getByLabel('points visible on the map');
      assert.equal(await points.isChecked(), false);
      assert.equal(await page.getByLabel('districts visible on the map').isChecked(), true);
      await until('the map to be drawn', () => drawings.length > 0);
      const drawn = () => [...new Set(drawings.map((url) => url.searchParams.get('layers')))];
      assert.deepEqual(drawn(), ['districts'], 'the map never asks for the points');
      assert.deepEqual(
        await legend.getByRole('img').evaluateAll((images) => images.map((image) => image.getAttribute('alt'))),
        ['Legend of districts'],
      );
      await screenshot(page, 'map-tree-hidden');
      await points.check();
      await legend.getByRole('img', { name: 'Legend of points' }).waitFor();
      await until(
        () => `the points to be drawn (asked: ${drawn().join('; ')})`,
        () => drawn().some((layers) => layers?.split(',').includes('points')),
      );
    } finally {
      await showPoints(true);
    }
    assert.deepEqual(errors, []);
  });

  test('a click and Enter on the map show the attributes there; Escape closes them', async () => {
    const map = page.getByTestId('project-map');
    await centreWhen(map, 'the districts drawn', ([, , , alpha = 0]) => alpha > 0);
    await map.click();
    const panel = page.getByRole('region', { name: 'Features here' });
    await panel.getByRole('table', { name: 'districts · feature 5' }).waitFor();
    assert.equal(
      await panel
        .getByRole('row', { name: /population/ })
        .getByRole('cell')
        .innerText(),
      '4000',
    );
    assert.equal(await panel.getByRole('row', { name: /name/ }).getByRole('cell').innerText(), 'Hill');
    assert.equal(await settled(page, () => document.activeElement?.id, 'feature-info-title'), 'feature-info-title');
    await checkAccessibility(page, 'the feature info');
    await screenshot(page, 'map-feature-info');
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    assert.equal(
      await settled(page, () => document.activeElement?.getAttribute('data-testid'), 'project-map'),
      'project-map',
      'the focus goes back to the map',
    );

    // The keyboard alone: the map has the focus, Enter asks about its centre.
    await page.keyboard.press('Enter');
    await panel.getByRole('table', { name: 'districts · feature 5' }).waitFor();
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'detached' });
    assert.deepEqual(errors, []);
  });

  test('zoom to a layer and to the project move the map there', async () => {
    const map = page.getByTestId('project-map');
    const panel = page.getByRole('region', { name: 'Features here' });
    /** Zooms with `button`, then asks about the map's centre: the district there is `district`. */
    const zoomFinds = async (button: string, district: string): Promise<void> => {
      await page.getByRole('button', { name: button, exact: true }).click();
      // The view is fitted in an effect: on a busy machine Enter could ask about the old centre.
      await effectsRun(page);
      await map.focus();
      await page.keyboard.press('Enter');
      await panel.getByRole('row', { name: /name/ }).getByText(district).waitFor();
      await page.keyboard.press('Escape');
    };
    // A layer of a CRS the browser does not know (ETRS89-LAEA, northing first by EPSG) is zoomed to
    // by its extent in degrees; it is removed again, as the other tests know two layers.
    const laea = join(run.demo, 'points-laea.gpkg');
    execFileSync('ogr2ogr', [
      '-f',
      'GPKG',
      '-t_srs',
      'EPSG:3035',
      '-nln',
      'points',
      laea,
      join(run.demo, 'points.gpkg'),
    ]);
    const laeaLayer = { datasource: `${laea}|layername=points`, name: 'points_laea', type: 'vector' };
    assert.equal((await stack.call('POST', '/api/projects/town/layers', laeaLayer)).status, 201);
    try {
      await page.reload();
      await zoomFinds('Zoom to points_laea', 'Old Town');
    } finally {
      assert.equal((await stack.call('DELETE', '/api/projects/town/layers/points_laea')).status, 200);
      await page.reload();
    }
    await zoomFinds('Zoom to points', 'Old Town');
    await zoomFinds('Zoom to the project', 'Hill');
    assert.deepEqual(errors, []);
  });

  test('the attribute table pages through WFS, and says where to publish a layer it cannot read', async () => {
    await page.getByRole('button', { name: 'Attribute table of districts' }).click();
    let dialog = page.getByRole('dialog', { name: 'Attributes of districts' });
    await dialog
      .getByRole('alert')
      .getByText(/not published by WFS/)
      .waitFor();
    assert.equal(
      await dialog.getByRole('link', { name: 'Services tab' }).getAttribute('href'),
      '/projects/town/services',
    );
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Attribute table of points' }).click();
    dialog = page.getByRole('dialog', { name: 'Attributes of points' });
    const status = dialog.getByRole('navigation', { name: 'Pages of features' }).getByRole('status');
    const rows = dialog.getByRole('region', { name: 'Attribute table of points' }).locator('tbody tr');
    await status.getByText('Features 1–50 of 120').waitFor();
    assert.equal(await rows.count(), 50);
    assert.deepEqual(await rows.first().locator('td').allInnerTexts(), ['1', '1', 'Point 1']);
    await checkAccessibility(page, 'the attribute table');
    await screenshot(page, 'map-attribute-table');
    const next = dialog.getByRole('button', { name: 'Next page' });
    await next.click();
    await status.getByText('Features 51–100 of 120').waitFor();
    assert.deepEqual(await rows.first().locator('td').allInnerTexts(), ['51', '51', 'Point 51']);
    await next.click();
    await status.getByText('Features 101–120 of 120').waitFor();
    assert.equal(await rows.count(), 20);
    assert.deepEqual(await rows.last().locator('td').allInnerTexts(), ['120', '120', 'Point 120']);
    assert.equal(await next.isDisabled(), true);
    await dialog.getByRole('button', { name: 'Previous page' }).click();
    await status.getByText('Features 51–100 of 120').waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.deepEqual(errors, []);
  });

  test('styles: switched on the map, downloaded as QML, uploaded as QML, and one deleted once confirmed', async () => {
    const map = page.getByTestId('project-map');
    const before = await centreWhen(map, 'the districts in their first style', ([, , , alpha = 0]) => alpha > 0);
    assert.ok(!near(before, [30, 60, 200]), `the districts start in another colour than blue: ${before.join(',')}`);
    await page.getByRole('button', { name: 'Styles of districts' }).click();
    const dialog = page.getByRole('dialog', { name: 'Styles of districts' });
    await dialog.getByRole('button', { name: 'Draw districts with blue' }).click();
    await dialog.getByRole('status').getByText('districts is drawn with blue.').waitFor();
    assert.equal((await layerInfo('districts')).current_style, 'blue');
    await dialog.getByTestId('style-blue').getByText('current').waitFor();
    // The dialog stands over the map's centre: the map is looked at once it is closed.
    const reopen = async (colour: string, expected: number[]): Promise<void> => {
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await centreWhen(map, colour, (pixel) => near(pixel, expected));
      await page.getByRole('button', { name: 'Styles of districts' }).click();
    };
    await reopen('blue', [30, 60, 200]);
    await checkAccessibility(page, 'the styles dialog');
    await screenshot(page, 'map-styles');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      dialog.getByRole('button', { name: 'Download blue as QML' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'blue.qml');
    const qml = readFileSync(await download.path(), 'utf8');
    assert.match(qml, /30,60,200/, 'the QML holds the blue');

    await dialog.getByLabel('Style name').fill('red');
    await dialog.getByLabel(/^QML document or style package/).setInputFiles({
      name: 'red.qml',
      mimeType: 'application/xml',
      buffer: Buffer.from(qml.replaceAll('30,60,200', '200,30,30')),
    });
    await dialog.getByRole('button', { name: 'Upload the style' }).click();
    await dialog.getByRole('status').getByText('Style red uploaded.').waitFor();
    assert.equal((await layerInfo('districts')).current_style, 'red');
    await reopen('red', [200, 30, 30]);

    await dialog.getByRole('button', { name: 'Delete style blue' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete style “blue”?' });
    await confirm.getByRole('button', { name: 'Delete blue' }).click();
    await dialog.getByRole('status').getByText('Style blue was deleted.').waitFor();
    await dialog.getByTestId('style-blue').waitFor({ state: 'detached' });
    assert.ok(!(await layerInfo('districts')).styles.includes('blue'));
    assert.ok(!((await stack.call('GET', '/api/projects/town/styles')).body as string[]).includes('blue'));
    assert.deepEqual(errors, []);
  });

  test('feature info leaves out a layer the project does not identify, says so, and is never a 5xx for it', async () => {
    const original = await stack.storage.projectXml('town');
    const publish = async (xml: string): Promise<void> => {
      const response = await fetch(`${stack.api.url}/api/projects/town/archive?replace=true`, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: xml,
      });
      assert.equal(response.status, 200, await response.text());
    };
    const pointsLayer =
      /<maplayer\b(?:(?!<\/maplayer>)[^])*<layername>points<\/layername>(?:(?!<\/maplayer>)[^])*<\/maplayer>/;
    const layer = pointsLayer.exec(original)?.[0] ?? '';
    assert.match(layer, /<Identifiable>1<\/Identifiable>/);
    await publish(
      original.replace(layer, layer.replace('<Identifiable>1</Identifiable>', '<Identifiable>0</Identifiable>')),
    );
    try {
      const { bbox } = (await stack.call('GET', '/api/projects/town/layers/districts')).body as { bbox: string };
      const view = (layers: string, pixel = '50') =>
        stack.call(
          'GET',
          `/api/projects/town/feature-info?layers=${layers}&crs=EPSG:4326&bbox=${bbox.split(/[ ,]+/).join(',')}` +
            `&width=100&height=100&i=${pixel}&j=50`,
        );
      assert.deepEqual(await view('points'), { status: 200, body: { features: [], not_identifiable: ['points'] } });
      const both = (await view('districts,points')).body as {
        features: Array<{ layer: string }>;
        not_identifiable: string[];
      };
      assert.deepEqual(
        [both.features.map((feature) => feature.layer), both.not_identifiable],
        [['districts'], ['points']],
      );
      const outside = await view('points', '100');
      assert.equal(outside.status, 400);
      assert.match((outside.body as { error: string }).error, /i must be a pixel of the view, 0 to 99/);

      await page.goto('/projects/town');
      const map = page.getByTestId('project-map');
      await centreWhen(map, 'the districts drawn', ([, , , alpha = 0]) => alpha > 0);
      await page.getByLabel('districts visible on the map').uncheck();
      await map.focus();
      await page.keyboard.press('Enter');
      const panel = page.getByRole('region', { name: 'Features here' });
      await panel
        .getByRole('status')
        .getByText('Nothing can be queried here: layer “points” is not identifiable in this project')
        .waitFor();
      assert.equal(await panel.getByRole('alert').count(), 0, 'no error is shown');
      await screenshot(page, 'map-feature-info-not-identifiable');
      await page.keyboard.press('Escape');
      await page.getByLabel('districts visible on the map').check();
      await map.focus();
      await page.keyboard.press('Enter');
      await panel.getByRole('table', { name: 'districts · feature 5' }).waitFor();
      await panel.getByText('Not queried: “points”, not identifiable in this project').waitFor();
      await checkAccessibility(page, 'the feature info with a layer not identifiable');
      await page.keyboard.press('Escape');
    } finally {
      await publish(original);
    }
    assert.deepEqual(errors, []);
  });

  test('at 390 px the feature info and the attribute table fit the screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto('/projects/town');
      const map = page.getByTestId('project-map');
      await centreWhen(map, 'the districts drawn', ([, , , alpha = 0]) => alpha > 0);
      await map.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('region', { name: 'Features here' }).getByRole('table').first().waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `the project page with feature info is ${width} px wide at 390 px`);
      await screenshot(page, 'map-feature-info-390');
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: 'Attribute table of points' }).click();
      const dialog = page.getByRole('dialog', { name: 'Attributes of points' });
      await dialog.getByRole('status').getByText('Features 1–50 of 120').waitFor();
      const box = await dialog.boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the table's dialog spans ${JSON.stringify(box)}`);
      await checkAccessibility(page, 'the attribute table at 390 px');
      await screenshot(page, 'map-attribute-table-390');
      await page.keyboard.press('Escape');
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    assert.deepEqual(errors, []);
  });
});
