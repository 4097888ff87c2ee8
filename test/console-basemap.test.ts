/**
 * The basemap under a project's map in Chromium, against a real Steward, QGIS Server and MapProxy:
 * off by default, a graticule drawn in the browser under the layers QGIS Server drew (only where
 * they leave the map empty), kept across pages, and never a request beyond Steward.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { type Locator, type Page } from 'playwright-core';

import { asked, centreWhen, checkAccessibility, screenshot } from './support/browser.js';
import { type CacheStack, startCacheStack } from './support/cache-stack.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { after, before, describe, test } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { waitFor } from './support/wait.js';

const WHITE = [255, 255, 255];

interface Shot {
  png: Buffer;
  image: Image;
}

/** The pixels of `after` that differ from `before`, each with its colour in `before`. */
function changes(before: Image, after: Image): Array<{ was: number[]; now: number[] }> {
  const changed: Array<{ was: number[]; now: number[] }> = [];
  for (let y = 0; y < before.height; y++) {
    for (let x = 0; x < before.width; x++) {
      const was = before.pixel(x, y).slice(0, 3);
      const now = after.pixel(x, y).slice(0, 3);
      if (was.some((value, channel) => Math.abs(value - (now[channel] ?? 0)) > 4)) changed.push({ was, now });
    }
  }
  return changed;
}

const white = (pixel: number[]) => pixel.every((value, channel) => value === WHITE[channel]);
/** A pixel of the districts' fill: far from grey. */
const coloured = (pixel: number[]) => Math.max(...pixel) - Math.min(...pixel) > 60;
/** The graticule's lines: blue over white, never grey (the districts are filled in other colours). */
const bluish = ([r = 0, g = 0, b = 0]: number[]) => b > r + 30 && b > g + 20;

describe('web console: the basemap', () => {
  let run: ConsoleRun<CacheStack>;
  let cs: CacheStack;
  let page: Page;
  let errors: string[];
  const outside: string[] = [];

  /**
   * The map as shown once it stops changing (QGIS Server's image in, OpenLayers done rendering),
   * after it changed from `from` when given.
   */
  const steadyImage = async (map: Locator, from?: Shot): Promise<Shot> => {
    let last: Buffer | undefined;
    let changed = from === undefined;
    return waitFor(
      from ? 'the map to change, then stop changing' : 'the map to stop changing',
      async () => {
        const png = await map.screenshot();
        changed ||= !png.equals(from?.png ?? Buffer.alloc(0));
        const steady = changed && (last?.equals(png) ?? false);
        last = png;
        return steady && { png, image: decodePng(png) };
      },
      20_000,
      300,
    );
  };

  before(async () => {
    run = await startConsoleRun(
      'console-basemap',
      (data) => startCacheStack({ dataRoots: [data] }),
      (server) => server.stack.api.url,
    );
    ({ server: cs, page, errors } = run);
    const origin = new URL(cs.stack.api.url).host;
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.protocol.startsWith('http') && url.host !== origin) outside.push(request.url());
    });
    assert.equal((await cs.stack.call('POST', '/api/projects', { name: 'town', author: 'Ada' })).status, 201);
    const districts = {
      datasource: `${join(run.demo, 'town.gpkg')}|layername=districts`,
      name: 'districts',
      type: 'vector',
    };
    assert.equal((await cs.stack.call('POST', '/api/projects/town/layers', districts)).status, 201);
  });

  after(() => run?.close());

  test('a graticule is drawn under the layers, only where they leave the map empty, and taken away', async () => {
    const drawings = asked(page, '/api/projects/town/wms');
    await page.goto('/projects/town');
    const map = page.getByTestId('project-map');
    const basemap = page.getByLabel('Basemap');
    assert.equal(await basemap.inputValue(), 'none', 'no basemap unless chosen');
    await centreWhen(map, 'the districts drawn', (pixel) => !white(pixel.slice(0, 3)));
    const bare = await steadyImage(map);
    const asks = drawings.length;

    await basemap.selectOption('graticule');
    const gridded = await steadyImage(map, bare);
    const changed = changes(bare.image, gridded.image);
    assert.ok(changed.length > 300, `the graticule draws lines (${changed.length} pixels changed)`);
    // The districts are filled in a colour; the map's controls (zoom buttons, scale) are grey on
    // white, and the graticule's lines and labels cross them.
    const onDistricts = changed.filter(({ was }) => coloured(was));
    assert.ok(
      onDistricts.length <= changed.length * 0.01,
      `the graticule is under the districts: ${onDistricts.length} of ${changed.length} changed pixels were on them`,
    );
    assert.ok(changed.filter(({ was }) => white(was)).length > changed.length * 0.8, 'mostly where the map was empty');
    const blue = changed.filter(({ now }) => bluish(now)).length;
    assert.ok(blue > 300, `lines in the graticule’s blue (${blue} pixels; its labels are black)`);
    assert.equal(drawings.length, asks, 'QGIS Server is not asked again for a basemap');
    await checkAccessibility(page, 'the project page with a graticule');
    await screenshot(page, 'basemap-graticule');

    await basemap.selectOption('none');
    const after = await steadyImage(map, gridded);
    assert.ok(changes(bare.image, after.image).length < 20, 'taken away, the map is as it was');
    await basemap.selectOption('graticule');
    assert.deepEqual(outside, [], 'nothing is fetched from beyond Steward');
    assert.deepEqual(errors, []);
  });

  test('the choice is kept: the cache page’s area map draws the graticule too', async () => {
    await page.goto('/projects/town/cache');
    const basemap = page.getByLabel('Basemap');
    assert.equal(await basemap.inputValue(), 'graticule');
    const map = page.getByTestId('project-map');
    await centreWhen(map, 'the districts drawn', (pixel) => !white(pixel.slice(0, 3)));
    const { image } = await steadyImage(map);
    let lines = 0;
    for (let y = 0; y < image.height; y++) {
      for (let x = 0; x < image.width; x++) if (bluish(image.pixel(x, y))) lines++;
    }
    assert.ok(lines > 300, `the cache page's map shows the graticule (${lines} blue pixels)`);
    await checkAccessibility(page, 'the cache page with a graticule');
    await screenshot(page, 'basemap-cache-area');
    await basemap.selectOption('none');
    assert.deepEqual(outside, []);
    assert.deepEqual(errors, []);
  });
});
