/**
 * The web console in Chromium against a real Steward and QGIS Server: every page is used as a
 * person would, checked with axe-core and screenshotted into test/screenshots/.
 */
import assert from 'node:assert/strict';

import { type Page } from 'playwright-core';

import { centreWhen, checkAccessibility, screenshot, settled } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { after, before, describe, test } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { type Stack, startStack } from './support/stack.js';

describe('web console', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  let demo: string;

  before(async () => {
    run = await startConsoleRun(
      'console',
      (data) => startStack({ dataRoots: [data], monitoringPort: undefined }),
      (server) => server.api.url,
    );
    ({ server: stack, page, errors, demo } = run);
  });

  after(() => run?.close());

  test('the API serves the console at / and keeps its own paths', async () => {
    const home = await fetch(`${stack.api.url}/`);
    assert.equal(home.status, 200);
    assert.match(home.headers.get('content-type') ?? '', /^text\/html/);
    const html = await home.text();
    const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, 'index.html loads a built script');
    const asset = await fetch(stack.api.url + script);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('cache-control') ?? '', /immutable/);

    const clientRoute = await fetch(`${stack.api.url}/projects/anything/styles`);
    assert.equal(await clientRoute.text(), html, 'a console path answers index.html');
    for (const path of ['/api/nothing', '/health/nothing', '/metrics/nothing', '/assets/missing.js']) {
      const response = await fetch(stack.api.url + path);
      assert.equal(response.status, 404, path);
      assert.ok(((await response.json()) as { error?: string }).error, `${path} answers a JSON error`);
    }
    assert.match(await (await fetch(`${stack.api.url}/docs/`)).text(), /swagger/i);
  });

  test('projects: the empty state, then a project created from the form', async () => {
    await page.goto('/');
    await page.getByRole('heading', { name: 'No project yet' }).waitFor();
    await page.getByRole('button', { name: 'Make a demo project' }).waitFor();
    await checkAccessibility(page, 'the empty projects page');
    await screenshot(page, 'projects-empty');

    await page.getByLabel('Name').fill('parcels');
    await page.getByLabel('Author').fill('Ada');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL('**/projects/parcels');
    const listed = await stack.call('GET', '/api/projects');
    assert.deepEqual(listed.body, ['parcels']);

    await page.goto('/');
    const row = page.getByRole('row', { name: /parcels/ });
    await row.waitFor();
    assert.match(await row.innerText(), /filesystem\s+0\s+EPSG:3857\s+Ada/);
    await checkAccessibility(page, 'the projects page');
    await screenshot(page, 'projects');
  });

  test('projects: deleting asks first, naming what is lost', async () => {
    await stack.call('POST', '/api/projects', { name: 'scratch', author: 'Ada' });
    await page.goto('/');
    await page.getByRole('button', { name: 'Delete project scratch' }).click();
    const dialog = page.getByRole('dialog', { name: /Delete project “scratch”/ });
    await dialog.getByText('0 layers').waitFor();
    await checkAccessibility(page, 'the delete dialog');
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    assert.deepEqual((await stack.call('GET', '/api/projects')).body, ['parcels', 'scratch']);

    await page.getByRole('button', { name: 'Delete project scratch' }).click();
    await dialog.getByRole('button', { name: 'Delete scratch' }).click();
    await page.getByRole('row', { name: /scratch/ }).waitFor({ state: 'detached' });
    assert.deepEqual((await stack.call('GET', '/api/projects')).body, ['parcels']);
    assert.deepEqual(errors, []);
  });

  test('project page: a layer picked in the datasource browser appears on the map, with its metadata', async () => {
    await page.goto('/projects/parcels');
    await page.getByText('This project has no layer yet').waitFor();
    await page.getByRole('button', { name: 'Add layer' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a layer' });
    await dialog.getByText('town.gpkg').waitFor();
    // No S3 setting on this server: object storage is not offered, only what can be browsed.
    const kinds = await dialog.getByRole('radiogroup', { name: 'Where the data is' }).getByRole('radio').count();
    assert.equal(kinds, 2);
    assert.equal(await dialog.getByRole('radio', { name: /Object storage/ }).count(), 0);
    await checkAccessibility(page, 'the add-layer dialog');
    await screenshot(page, 'add-layer');
    await dialog.getByRole('button', { name: /^Use districts/ }).click();
    assert.equal(await dialog.getByLabel('Layer name').inputValue(), 'districts');
    assert.equal(await dialog.getByLabel('Type').inputValue(), 'vector');
    assert.equal(await dialog.getByLabel('CRS').inputValue(), 'EPSG:4326');
    assert.equal(await dialog.getByLabel('Datasource').inputValue(), `${demo}/town.gpkg|layername=districts`);
    await dialog.getByRole('button', { name: 'Add layer' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const layers = (await stack.call('GET', '/api/projects/parcels/layers')).body;
    assert.deepEqual(layers, ['districts']);
    const item = page.getByRole('listitem').filter({ hasText: 'Current style' });
    await item.getByText('valid').waitFor();
    assert.match(await item.innerText(), /Type\s+vector[\s\S]*CRS\s+EPSG:4326[\s\S]*Geometry\s+Polygon/);

    const map = page.getByTestId('project-map');
    const drawn = await centreWhen(map, 'drawn', ([r = 0, g = 0, b = 0]) => !(r === 255 && g === 255 && b === 255));
    assert.equal(drawn[3], 255);

    // Hiding the layer leaves the map blank.
    await page.getByRole('checkbox', { name: 'districts visible on the map' }).uncheck();
    await centreWhen(map, 'blank', ([r = 0, g = 0, b = 0]) => r === 255 && g === 255 && b === 255);
    await page.getByRole('checkbox', { name: 'districts visible on the map' }).check();
    await centreWhen(map, 'drawn again', ([r = 0, g = 0, b = 0]) => !(r === 255 && g === 255 && b === 255));
    await checkAccessibility(page, 'the project page');
    const wms = '/api/projects/parcels/wms?crs=EPSG:3857&width=256&height=256';
    for (const [query, status] of [
      ['&layers=districts&bbox=1,2,3', 400],
      ['&layers=districts&bbox=0,0,1,1&styles=a,b', 400],
      ['&layers=nope&bbox=0,0,1,1', 404],
    ] as const) {
      const reply = await stack.call('GET', wms + query);
      assert.equal(reply.status, status, query);
      assert.equal(typeof (reply.body as { error?: unknown }).error, 'string');
    }
    await screenshot(page, 'project');
    assert.deepEqual(errors, []);
  });

  test('styles: the editor makes a style current, which the map then draws', async () => {
    const map = page.getByTestId('project-map');
    const before = await centreWhen(map, 'drawn', ([r = 0, g = 0, b = 0]) => !(r === 255 && g === 255 && b === 255));
    await page.getByRole('button', { name: 'Edit the style of districts' }).click();
    const editor = page.getByRole('form', { name: 'Style editor for districts' });
    await editor.getByLabel('Color', { exact: true }).waitFor();
    await editor.getByLabel('Style name').fill('red');
    await editor.getByLabel('Color', { exact: true }).fill('#ff0000');
    await editor.getByLabel('Outline style').selectOption('no');
    await checkAccessibility(page, 'the style editor');
    // The map draws the form as it stands (through Steward's plugin, which this stack lacks): no saved preview.
    assert.equal(await editor.getByRole('button', { name: 'Preview on the map' }).count(), 0);
    const info = (await stack.call('GET', '/api/projects/parcels/layers/districts')).body as { styles: string[] };
    assert.ok(!info.styles.includes('red'), 'the style being edited is not stored');

    await editor.getByRole('button', { name: 'Make current style' }).click();
    await editor.getByText('is now the current style of districts').waitFor();
    const current = (await stack.call('GET', '/api/projects/parcels/layers/districts')).body as {
      current_style: string;
    };
    assert.equal(current.current_style, 'red');
    const png = await fetch(`${stack.api.url}/api/projects/parcels/layers/districts/map`);
    assert.deepEqual(decodePng(Buffer.from(await png.arrayBuffer())).pixel(200, 200), [255, 0, 0, 255]);
    const drawn = await centreWhen(map, 'red', ([r = 0, g = 0, b = 0]) => r > 240 && g < 15 && b < 15);
    assert.notDeepEqual(drawn, before);
    await screenshot(page, 'style-editor');
    assert.deepEqual(errors, []);
  });

  test('styles: the editor opens in view from the current style, and replaces it in one request', async () => {
    await page.reload();
    await page.getByRole('button', { name: 'Edit the style of districts' }).click();
    const heading = page.getByRole('heading', { name: 'Style of districts' });
    await heading.waitFor();
    assert.equal(
      await settled(page, () => document.activeElement?.id, 'style-title'),
      'style-title',
      'focus moves to the editor',
    );
    const box = await heading.boundingBox();
    assert.ok(box && box.y >= 0 && box.y < 860, `the editor's heading is in view (y ${box?.y})`);
    const editor = page.getByRole('form', { name: 'Style editor for districts' });
    assert.equal(await editor.getByLabel('Style name').inputValue(), 'red', 'the editor starts from the current style');
    assert.equal(await editor.getByLabel('Color', { exact: true }).inputValue(), '#ff0000');
    assert.equal(await editor.getByLabel('Outline style').inputValue(), 'no');

    await editor.getByLabel('Style name').fill('a/b');
    await editor.getByRole('button', { name: 'Make current style' }).click();
    await editor.getByRole('alert').getByText('The style name “a/b” may not contain a slash.').waitFor();
    await editor.getByLabel('Style name').fill('red');

    const methods: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.includes('/styles')) methods.push(request.method());
    });
    await editor.getByLabel('Color', { exact: true }).fill('#0000ff');
    await editor.getByRole('button', { name: 'Make current style' }).click();
    await editor.getByText('is now the current style of districts').waitFor();
    assert.ok(methods.includes('PUT'), methods.join(' '));
    assert.ok(!methods.includes('DELETE'), `no DELETE before the new version: ${methods.join(' ')}`);
    const png = await fetch(`${stack.api.url}/api/projects/parcels/layers/districts/map`);
    assert.deepEqual(decodePng(Buffer.from(await png.arrayBuffer())).pixel(200, 200), [0, 0, 255, 255]);
    await screenshot(page, 'style-editor-current');
    assert.deepEqual(errors, []);
  });

  test('instances: without monitoring the page says how to turn it on', async () => {
    await page.getByRole('link', { name: 'Instances' }).click();
    await page.getByText('Monitoring is not enabled on this Steward').waitFor();
    await checkAccessibility(page, 'the instances page without monitoring');
    assert.deepEqual(errors, []);
  });
});
