/**
 * "Upload SLD" in the style card of a project's page, in Chromium against a real Steward and QGIS
 * Server: a GeoServer SLD file becomes the layer's current style and the map draws it; a file
 * that is not SLD is refused with the API's reason and changes nothing.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { type Page } from 'playwright-core';

import { centreWhen, checkAccessibility, screenshot } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { districtsStyles } from './support/demo-town.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

const GREEN_FILL = `<?xml version="1.0" encoding="UTF-8"?>
<StyledLayerDescriptor version="1.0.0" xmlns="http://www.opengis.net/sld">
  <NamedLayer><Name>districts</Name><UserStyle><FeatureTypeStyle><Rule>
    <PolygonSymbolizer><Fill><CssParameter name="fill">#00aa00</CssParameter></Fill></PolygonSymbolizer>
  </Rule></FeatureTypeStyle></UserStyle></NamedLayer>
</StyledLayerDescriptor>
`;

describe('web console: Upload SLD', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  const layerInfo = () => districtsStyles(stack);

  before(async () => {
    run = await startConsoleRun(
      'console-sld',
      (data) => startStack({ dataRoots: [data] }),
      (server) => server.api.url,
    );
    ({ server: stack, page, errors } = run);
    assert.equal((await stack.call('POST', '/api/projects', { name: 'town', author: 'Ada' })).status, 201);
    const datasource = `${join(run.demo, 'town.gpkg')}|layername=districts`;
    const added = await stack.call('POST', '/api/projects/town/layers', {
      datasource,
      name: 'districts',
      type: 'vector',
    });
    assert.equal(added.status, 201);
  });

  after(() => run?.close());

  test('an SLD file becomes the current style, drawn on the map', async () => {
    await page.goto('/projects/town');
    await page.getByRole('button', { name: 'Edit the style of districts' }).click();
    const form = page.getByRole('form', { name: 'Upload an SLD style for districts' });
    await form.getByLabel('SLD file (SLD 1.0 or SE 1.1)').setInputFiles({
      name: 'green-districts.sld',
      mimeType: 'application/vnd.ogc.sld+xml',
      buffer: Buffer.from(GREEN_FILL),
    });
    assert.equal(await form.getByLabel('Style name').inputValue(), 'green-districts', 'named after the file');
    await checkAccessibility(page, 'the SLD upload');
    await form.getByRole('button', { name: 'Upload SLD' }).click();
    await form.getByRole('status').getByText('Style green-districts was created from the SLD').waitFor();
    assert.equal((await layerInfo()).current_style, 'green-districts');
    const map = page.getByTestId('project-map');
    await centreWhen(map, 'green', ([r = 0, g = 0, b = 0]) => r < 15 && g > 155 && g < 185 && b < 15);
    await screenshot(page, 'sld-upload');
    assert.deepEqual(errors, []);
  });

  test('a file that is not SLD is refused with the reason, and nothing changes', async () => {
    const form = page.getByRole('form', { name: 'Upload an SLD style for districts' });
    await form.getByLabel('SLD file (SLD 1.0 or SE 1.1)').setInputFiles({
      name: 'style.qml',
      mimeType: 'application/xml',
      buffer: Buffer.from('<qgis version="3.22"/>'),
    });
    await form.getByLabel('Style name').fill('not-sld');
    await form.getByRole('button', { name: 'Upload SLD' }).click();
    await form.getByText('root element is <qgis>', { exact: false }).waitFor();
    const info = await layerInfo();
    assert.equal(info.current_style, 'green-districts');
    assert.ok(!info.styles.includes('not-sld'));
  });
});
