/**
 * "View as" a role on the project page, in Chromium against a real Steward whose QGIS Server runs
 * the plugin's access filter: an administrator picks the viewer role, and the map (pixels), the
 * legend and the feature info become what the role is served, the road its filter leaves out and
 * the layer it hides no longer drawn, listed or found.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { type Browser, type Locator, type Page } from 'playwright-core';

import { checkAccessibility, launchBrowser, openPage, screenshot } from './support/browser.js';
import { apiCall } from './support/http.js';
import { PLUGIN_PATH } from './support/insight-stack.js';
import { after, before, describe, test } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { type Stack, startStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const ADMIN = 'console-view-as-admin-token';
/** Hides the secret layer, and the roads' owners and private road (write_access_project.py). */
const VIEWER_ROLE = {
  projects: {
    town: {
      access: 'read',
      layers: { secret: { read: false }, roads: { hidden_attributes: ['owner'], filter: `"kind" = 'public'` } },
    },
  },
};

const RED = [255, 0, 0];
const BLUE = [0, 0, 255];
const near = ([r = 0, g = 0, b = 0, a = 0]: number[], [er = 0, eg = 0, eb = 0]: number[]): boolean =>
  a > 200 && Math.abs(r - er) <= 10 && Math.abs(g - eg) <= 10 && Math.abs(b - eb) <= 10;

/** The pixels of `image` near a colour, as [x, y]. */
function pixelsNear(image: Image, colour: number[]): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (let y = 0; y < image.height; y++)
    for (let x = 0; x < image.width; x++) if (near(image.pixel(x, y), colour)) found.push([x, y]);
  return found;
}

describe('web console: view the map as a role', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(async () => {
    [stack, browser] = await Promise.all([
      startStack({ apiToken: ADMIN }, { env: { QGIS_PLUGINPATH: PLUGIN_PATH } }, 'filesystem'),
      launchBrowser(),
    ]);
    mkdirSync(join(stack.projectsDir, 'town'));
    runPyqgisScript('write_access_project.py', join(stack.projectsDir, 'town', 'town.qgs'));
    assert.equal((await apiCall(stack.api.url, 'PUT', '/api/roles/viewer', VIEWER_ROLE, ADMIN)).status, 201);
    ({ page, errors } = await openPage(browser, stack.api.url));
    await page.context().addInitScript((token) => sessionStorage.setItem('steward.token', token), ADMIN);
  });

  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** The map once its red and blue pixels pass `drawn`: QGIS Server draws, then OpenLayers renders. */
  const mapWhen = (map: Locator, what: string, drawn: (red: number, blue: number) => boolean): Promise<Image> =>
    waitFor(
      `the map to show ${what}`,
      async () => {
        const image = decodePng(await map.screenshot());
        return drawn(pixelsNear(image, RED).length, pixelsNear(image, BLUE).length) && image;
      },
      30_000,
      250,
    );

  test("the map, legend and feature info become the role's, drawn by QGIS Server", async () => {
    await page.goto('/projects/town');
    const map = page.getByTestId('project-map');
    const legend = page.getByRole('region', { name: 'Legend' });
    await legend.getByRole('img', { name: 'Legend of secret' }).waitFor();
    // Three red squares and a blue one, as the administrator sees them.
    const own = await mapWhen(map, 'every road and the secret layer', (red, blue) => red > 300 && blue > 100);
    const ownRed = pixelsNear(own, RED);

    await page.getByLabel('View the map as').selectOption('viewer');
    await page.getByRole('status').getByText('what role viewer is served').waitFor();
    const viewed = await mapWhen(
      map,
      "the viewer's public roads only",
      (red, blue) => blue === 0 && red > 0 && red < ownRed.length * 0.8,
    );
    const viewedRed = new Set(pixelsNear(viewed, RED).map(([x, y]) => `${x},${y}`));
    // The private road: red for the administrator, not drawn for the viewer.
    const privateRoad = ownRed.filter(([x, y]) => !viewedRed.has(`${x},${y}`));
    assert.ok(privateRoad.length > 100, `the private road is left out (${privateRoad.length} pixels)`);
    await legend.getByRole('img', { name: 'Legend of roads' }).waitFor();
    await legend.getByRole('img', { name: 'Legend of secret' }).waitFor({ state: 'detached' });
    await checkAccessibility(page, 'the project page viewed as a role');
    await screenshot(page, 'map-view-as');

    // Where the private road is drawn for the administrator, the viewer finds nothing.
    const [sumX, sumY] = privateRoad.reduce(([x, y], [px, py]) => [x + px, y + py], [0, 0]);
    const at = { x: sumX / privateRoad.length, y: sumY / privateRoad.length };
    const info = page.getByRole('region', { name: 'Features here' });
    await map.click({ position: at });
    await info.getByText('No feature of the layers shown is at this point.').waitFor();
    // A public road is found without its owner.
    const inside = [...viewedRed]
      .map((key) => key.split(',').map(Number) as [number, number])
      .find(([x, y]) => [-4, 4].every((d) => viewedRed.has(`${x + d},${y}`) && viewedRed.has(`${x},${y + d}`)));
    assert.ok(inside, 'a public road is drawn whole');
    await map.click({ position: { x: inside[0], y: inside[1] } });
    await info.getByRole('table').waitFor();
    assert.equal(await info.getByRole('rowheader', { name: 'owner' }).count(), 0, 'the owner is hidden');
    assert.equal(await info.getByRole('cell', { name: 'public', exact: true }).count(), 1);

    await page.getByLabel('View the map as').selectOption('');
    await mapWhen(map, 'every road again', (red, blue) => red >= ownRed.length * 0.95 && blue > 100);
    await map.click({ position: at });
    await info.getByRole('cell', { name: 'bob', exact: true }).waitFor();
    assert.deepEqual(errors, []);
  });
});
