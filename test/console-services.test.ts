/**
 * The Services tab in Chromium against a real Steward and QGIS Server: a vector layer published
 * through WFS and the WMS maximum width changed through the form, checked in the API's state and
 * in QGIS Server's own WFS capabilities, fetched from the URL the page shows; the feature info
 * options set through the form; the WMTS tile grids set through the form (each field checked next
 * to it), as QGIS Server's TileMatrixSets. The stack has a public OWS address other than the internal one (`localhost`
 * for nginx's 127.0.0.1, as a proxy in front would be): the URLs shown and opened are on it, and
 * so are those QGIS Server's capabilities advertise, however they were asked for.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { type Locator, type Page } from 'playwright-core';

import { freePort } from '../src/runtime/ports.js';
import { checkAccessibility, screenshot } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

interface Services {
  wms: {
    crs: string[];
    max_width: number | null;
    max_height: number | null;
    feature_info: { geometry: boolean; precision: number };
  };
  wfs: {
    enabled: boolean;
    layers: string[];
    precision: Record<string, number>;
    insert: string[];
    update: string[];
    delete: string[];
  };
  wcs: { layers: string[] };
  wmts: {
    grids: Array<{ crs: string; top: number; left: number; scale_denominator: number; last_level: number }> | null;
  };
  endpoints: { wms: string; wfs: string; wmts: string; ogcapi_features: string; address: string };
}

/** The `xlink:href`s of a capabilities document that lead to QGIS Server (`/ows/`). */
function owsLinks(xml: string): string[] {
  return [...xml.matchAll(/xlink:href="([^"]+)"/g)]
    .map((match) => (match[1] ?? '').replaceAll('&amp;', '&'))
    .filter((href) => href.includes('/ows/'));
}

describe('web console: the Services tab', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  let demo: string;
  let publicUrl: string;
  const services = async () => (await stack.call('GET', '/api/projects/town/services')).body as Services;

  before(async () => {
    const port = await freePort();
    publicUrl = `http://localhost:${port}/ows/`;
    run = await startConsoleRun(
      'console-services',
      (data) => startStack({ dataRoots: [data], publicOwsUrl: publicUrl }, { port }),
      (server) => server.api.url,
    );
    ({ server: stack, page, errors, demo } = run);
    assert.equal((await stack.call('POST', '/api/projects', { name: 'town', author: 'Ada' })).status, 201);
    const layers = [
      { datasource: join(demo, 'elevation.tif'), name: 'elevation', type: 'raster' },
      { datasource: `${join(demo, 'town.gpkg')}|layername=districts`, name: 'districts', type: 'vector' },
    ];
    for (const layer of layers)
      assert.equal((await stack.call('POST', '/api/projects/town/layers', layer)).status, 201);
  });

  after(() => run?.close());

  test('publishing a layer to WFS and bounding WMS width: the API and QGIS Server agree', async () => {
    await page.goto('/projects/town');
    await page.getByRole('link', { name: 'Services' }).click();
    await page.getByRole('heading', { name: 'town: services' }).waitFor();
    const form = page.getByRole('form', { name: 'Service settings' });
    assert.deepEqual((await services()).wfs.layers, []);

    await form.getByLabel('districts published through WFS').check();
    await form.getByRole('checkbox', { name: 'insert districts' }).check();
    await form.getByLabel('precision of districts').selectOption('1');
    await form.getByLabel(/^Maximum width/).fill('2000');
    await form.getByLabel('Add the geometry to feature info').check();
    await form.getByLabel(/^Feature info geometry precision/).fill('3');
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Saved: wms, wfs.').waitFor();

    const state = await services();
    assert.deepEqual(state.wfs.layers, ['districts']);
    assert.deepEqual(state.wfs.insert, ['districts']);
    assert.deepEqual(state.wfs.precision, { districts: 1 });
    assert.equal(state.wfs.enabled, true);
    assert.equal(state.wms.max_width, 2000);
    assert.equal(state.wms.max_height, null, 'only what changed is sent');
    assert.deepEqual([state.wms.feature_info.geometry, state.wms.feature_info.precision], [true, 3]);
    assert.deepEqual(state.wcs.layers, []);

    const shown = page.getByRole('region', { name: 'Service URLs' });
    const url = (await shown.getByText(/SERVICE=WFS/).innerText()).trim();
    assert.equal(url, state.endpoints.wfs);
    const response = await fetch(url);
    const xml = await response.text();
    assert.equal(response.status, 200, xml.slice(0, 300));
    assert.match(xml, /<(\w+:)?FeatureType\b[\s\S]*<(\w+:)?Name>districts<\/(\w+:)?Name>/);
    // QGIS Server writes the coordinates of GetFeature with the precision set (the data has two decimals).
    const features = new URL(url);
    for (const [key, value] of Object.entries({ REQUEST: 'GetFeature', TYPENAME: 'districts', MAXFEATURES: '1' }))
      features.searchParams.set(key, value);
    const gml = await (await fetch(features)).text();
    const coordinates = [...gml.matchAll(/<(?:gml:)?(?:posList|coordinates|pos)\b[^>]*>([^<]+)</g)].flatMap((match) =>
      (match[1] ?? '').split(/[\s,]+/).filter(Boolean),
    );
    assert.ok(coordinates.length > 0, gml.slice(0, 500));
    assert.deepEqual(
      coordinates.filter((number) => /\.\d{2,}/.test(number)),
      [],
    );
    assert.ok(coordinates.map(Number).includes(43.6), JSON.stringify(coordinates));
    const landing = await fetch(state.endpoints.ogcapi_features, { headers: { accept: 'application/json' } });
    const links = (await landing.json()) as { links: Array<{ href: string }> };
    assert.equal(landing.status, 200);
    assert.ok(
      links.links.some((link) => link.href.includes('/collections')),
      JSON.stringify(links),
    );

    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Nothing changed.').waitFor();
    assert.deepEqual(errors, []);
  });

  test('the URLs are on the public address: the link opens it, and QGIS Server advertises it', async () => {
    const { endpoints } = await services();
    assert.equal(endpoints.address, 'public');
    for (const url of [endpoints.wms, endpoints.wfs, endpoints.ogcapi_features])
      assert.ok(url.startsWith(`${publicUrl}`), url);
    const shown = page.getByRole('region', { name: 'Service URLs' });
    await shown.getByText('The address clients reach QGIS Server at (STEWARD_PUBLIC_OWS_URL).').waitFor();
    assert.equal(await shown.getByText(/internal address/).count(), 0);

    const [opened] = await Promise.all([
      page.waitForEvent('popup'),
      shown.getByRole('link', { name: /SERVICE=WMS/ }).click(),
    ]);
    await opened.waitForLoadState();
    assert.equal(opened.url(), endpoints.wms);
    const advertised = await opened.evaluate(() =>
      Array.from(document.getElementsByTagName('OnlineResource'), (node) =>
        node.getAttributeNS('http://www.w3.org/1999/xlink', 'href'),
      ),
    );
    await opened.close();
    assert.ok(advertised.length > 1, JSON.stringify(advertised));
    for (const href of advertised) assert.ok(href?.startsWith(`${publicUrl}?MAP=`), href ?? 'no href');

    // Asked at the internal address, QGIS Server still advertises the public one: nginx says it.
    for (const url of [endpoints.wms, endpoints.wfs]) {
      const internal = new URL(url);
      internal.host = new URL(stack.qgis.url).host;
      const xml = await (await fetch(internal)).text();
      const links = owsLinks(xml);
      assert.ok(links.length > 0, xml.slice(0, 500));
      for (const href of links) assert.ok(href.startsWith(`${publicUrl}?MAP=`), `${href} in ${url}`);
    }

    await page.goto('/server');
    const server = page.getByRole('region', { name: 'QGIS Server' });
    await server.waitFor();
    assert.match(await server.innerText(), new RegExp(`Public OWS address\\s+${publicUrl}`));
    await page.goBack();
    assert.deepEqual(errors, []);
  });

  test('an advertised URL set in the form is the one the tab shows and QGIS Server advertises', async () => {
    const form = page.getByRole('form', { name: 'Service settings' });
    const advertised = 'https://maps.example.test/town/wms';
    await form.getByLabel('WMS advertised URL').fill(advertised);
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Saved: wms.').waitFor();
    const { wms, endpoints } = (await stack.call('GET', '/api/projects/town/services')).body as Services & {
      wms: { url: string };
    };
    assert.equal(wms.url, advertised);
    assert.ok(endpoints.wms.startsWith(`${advertised}?SERVICE=WMS`), endpoints.wms);
    assert.ok(endpoints.wfs.startsWith(publicUrl), 'the other services keep the public address');
    const shown = page.getByRole('region', { name: 'Service URLs' });
    assert.equal(await shown.getByRole('link', { name: /SERVICE=WMS/ }).getAttribute('href'), endpoints.wms);
    // QGIS Server takes the project's URL before the forwarded address.
    const internal = new URL((await services()).endpoints.wfs.replace('SERVICE=WFS', 'SERVICE=WMS'));
    internal.host = new URL(stack.qgis.url).host;
    internal.searchParams.set('VERSION', '1.3.0');
    const xml = await (await fetch(internal)).text();
    const resources = [...xml.matchAll(/<OnlineResource[^>]*xlink:href="([^"]+)"/g)].map((match) => match[1] ?? '');
    assert.ok(resources.length > 1, xml.slice(0, 300));
    for (const href of resources) assert.ok(href.startsWith(advertised), href);

    await form.getByLabel('WMS advertised URL').fill('https://');
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form
      .getByRole('alert')
      .getByText(/wms url must be an http:\/\/ or https:\/\/ URL, or empty/i)
      .waitFor();
    await form.getByLabel('WMS advertised URL').fill('');
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Saved: wms.').waitFor();
    assert.ok((await services()).endpoints.wms.startsWith(publicUrl));
    assert.deepEqual(errors, []);
  });

  test('WMTS tile grids set in the form, each field checked: QGIS Server publishes them as TileMatrixSets', async () => {
    const reply = await stack.call('PATCH', '/api/projects/town/services', {
      wmts: { layers: ['districts'], grids: [{ crs: 'EPSG:3857', last_level: 8 }] },
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    await page.reload();
    const form = page.getByRole('form', { name: 'Service settings' });
    const grids = form.getByRole('group', { name: 'WMTS tile grids' });
    // A fixed grid, as the API set it: only its last level is editable.
    const mercator = grids.getByRole('group', { name: 'Grid EPSG:3857' });
    assert.equal(await mercator.getByLabel(/^Last level/).inputValue(), '8');
    assert.equal(await mercator.getByLabel(/^Top/).count(), 0);
    assert.match(
      await mercator.innerText(),
      /QGIS Server’s own \(-20037508\.342789248, 20037508\.342789248; 1:559082264\.0287179/,
    );
    /** The problem said next to a field (its accessible description). */
    const problemOf = async (field: Locator): Promise<string> => {
      assert.equal(await field.getAttribute('aria-invalid'), 'true');
      return page.locator(`#${await field.getAttribute('aria-describedby')}`).innerText();
    };

    const adding = grids.getByLabel(/^CRS of a grid to add/);
    await adding.fill('Lambert 93');
    await grids.getByRole('button', { name: 'Add grid' }).click();
    assert.match(await problemOf(adding), /EPSG code such as EPSG:2154, not “Lambert 93”/);
    await adding.fill('epsg:4326');
    await adding.press('Enter');
    await adding.fill('2154');
    await grids.getByRole('button', { name: 'Add grid' }).click();
    assert.equal(await adding.getAttribute('aria-invalid'), null);
    await grids.getByRole('button', { name: 'Remove grid EPSG:4326' }).click();
    const lambert = grids.getByRole('group', { name: 'Grid EPSG:2154' });
    await lambert.getByLabel(/^Top/).fill('7230727.377');
    await lambert.getByLabel(/^Left/).fill('-357823.236');
    await lambert.getByLabel(/^Scale denominator/).fill('8 million');
    await lambert.getByLabel(/^Last level/).fill('31');
    assert.match(await problemOf(lambert.getByLabel(/^Scale denominator/)), /a number above 0, not “8 million”/);
    assert.match(await problemOf(lambert.getByLabel(/^Last level/)), /whole number from 0 to 30, not “31”/);
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('alert').getByText('A WMTS tile grid has a field to correct').waitFor();
    assert.deepEqual((await services()).wmts.grids?.length, 1, 'nothing sent while a field is wrong');

    await lambert.getByLabel(/^Scale denominator/).fill('8000000');
    await lambert.getByLabel(/^Last level/).fill('3');
    await mercator.getByLabel(/^Last level/).fill('5');
    assert.match(await lambert.innerText(), /Levels 0 to 3: 1:8000000 down to 1:1000000\./);
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Saved: wmts.').waitFor();
    const { wmts, endpoints } = await services();
    const saved = wmts.grids ?? [];
    // The fixed grid's corner and scale are the API's (the form showed them above).
    assert.deepEqual(
      saved.map((grid) => [grid.crs, grid.last_level]),
      [
        ['EPSG:3857', 5],
        ['EPSG:2154', 3],
      ],
    );
    assert.deepEqual(saved[1], {
      crs: 'EPSG:2154',
      top: 7230727.377,
      left: -357823.236,
      scale_denominator: 8000000,
      last_level: 3,
    });

    // QGIS Server's WMTS: a TileMatrixSet per grid, a TileMatrix per level up to the last.
    const response = await fetch(endpoints.wmts);
    const xml = await response.text();
    assert.equal(response.status, 200, xml.slice(0, 300));
    const sets = [...xml.matchAll(/<TileMatrixSet>\s*<ows:Identifier>([^<]+)<([\s\S]*?)<\/TileMatrixSet>/g)].map(
      (match) => [match[1], (match[2] ?? '').split('<TileMatrix>').length - 1],
    );
    assert.deepEqual(sets, [
      ['EPSG:3857', 6],
      ['EPSG:2154', 4],
    ]);
    assert.match(xml, /<TopLeftCorner>-357823\.236 7230727\.377<\/TopLeftCorner>/);
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Nothing changed.').waitFor();
    assert.deepEqual(errors, []);
  });

  test('WMTS tile grids: none defined is QGIS Server’s own, an empty list none, each told and chosen in the form', async () => {
    const matrixSets = async (): Promise<string[]> => {
      const xml = await (await fetch((await services()).endpoints.wmts)).text();
      return [...xml.matchAll(/<TileMatrixSet>\s*<ows:Identifier>([^<]+)</g)].map((match) => match[1] ?? '');
    };
    assert.equal((await stack.call('PATCH', '/api/projects/town/services', { wmts: { grids: null } })).status, 200);
    await page.reload();
    const form = page.getByRole('form', { name: 'Service settings' });
    const grids = form.getByRole('group', { name: 'WMTS tile grids' });
    await grids.getByText('None defined: QGIS Server’s own, one per WMS CRS.').waitFor();
    assert.ok((await matrixSets()).length > 0, 'QGIS Server publishes its own grids');

    await grids.getByLabel(/^CRS of a grid to add/).fill('EPSG:3857');
    await grids.getByRole('button', { name: 'Add grid' }).click();
    await grids.getByRole('button', { name: 'Remove grid EPSG:3857' }).click();
    await grids.getByText(/defines no grid: QGIS Server publishes no TileMatrixSet/).waitFor();
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Saved: wmts.').waitFor();
    assert.deepEqual((await services()).wmts.grids, []);
    assert.deepEqual(await matrixSets(), [], 'QGIS Server publishes none, as for a Desktop project with none ticked');

    await grids.getByRole('button', { name: 'Use QGIS Server’s own grids' }).click();
    await grids.getByText('None defined: QGIS Server’s own, one per WMS CRS.').waitFor();
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Saved: wmts.').waitFor();
    assert.equal((await services()).wmts.grids, null);
    assert.ok((await matrixSets()).length > 0);
    assert.deepEqual(errors, []);
  });

  test('WMTS groups, the whole project and tile formats, the WMS extent: set in the form, as QGIS Server serves them', async () => {
    const tree = {
      children: [
        { type: 'group', name: 'base', visible: true, children: [{ type: 'layer', name: 'elevation', visible: true }] },
        { type: 'layer', name: 'districts', visible: true },
      ],
    };
    assert.equal((await stack.call('PUT', '/api/projects/town/tree', tree)).status, 200);
    await page.reload();
    const form = page.getByRole('form', { name: 'Service settings' });
    const tiles = form.getByRole('group', { name: 'WMTS: published tiles' });
    await tiles.getByLabel('The whole project as one tiled layer').check();
    await tiles.getByRole('group', { name: 'Groups' }).getByLabel('base').check();
    await tiles.getByLabel('PNG tiles of group base').uncheck();
    await tiles.getByLabel('JPEG tiles of districts').uncheck();
    assert.ok(await tiles.getByLabel('PNG tiles of districts').isDisabled(), 'a tiled layer keeps one format');
    // Valid coordinates in any CRS the project may have; QGIS Server writes them as its box in that CRS.
    const advertised = [1, 2, 3, 4];
    await form.getByLabel(/^Advertised extent/).fill(advertised.join(', '));
    await form.getByLabel('Segmentize curved geometries in feature info').check();
    await form.getByLabel('Feature info fields as the attribute form shows them').check();
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Saved: wms, wmts.').waitFor();

    const state = (await services()) as Services & {
      wms: { extent: number[]; feature_info: { segmentize: boolean; use_form_settings: boolean } };
      wmts: { project: boolean; groups: string[]; layers: string[]; formats: Record<string, string[]> };
    };
    assert.deepEqual(state.wms.extent, advertised);
    assert.deepEqual([state.wms.feature_info.segmentize, state.wms.feature_info.use_form_settings], [true, true]);
    assert.equal(state.wmts.project, true);
    assert.deepEqual(state.wmts.groups, ['base']);
    assert.deepEqual(state.wmts.formats.base, ['image/jpeg']);
    assert.deepEqual(state.wmts.formats.districts, ['image/png']);

    const xml = await (await fetch(state.endpoints.wmts)).text();
    const layers = new Map(
      [...xml.matchAll(/<Layer>([\s\S]*?)<\/Layer>/g)].map((match) => {
        const body = match[1] ?? '';
        const id = /<ows:Identifier>([^<]+)</.exec(body)?.[1] ?? '';
        return [id, [...body.matchAll(/<Format>([^<]+)</g)].map((format) => format[1])];
      }),
    );
    assert.deepEqual(layers.get('base'), ['image/jpeg'], xml.slice(0, 400));
    assert.deepEqual(layers.get('districts'), ['image/png']);
    assert.ok(layers.size >= 3, `the project, the group and the layer: ${[...layers.keys()].join(', ')}`);
    const wms = await (await fetch(state.endpoints.wms)).text();
    const boxes = [...wms.matchAll(/<BoundingBox\b([^>]*)>/g)].map((match) =>
      ['minx', 'miny', 'maxx', 'maxy'].map((name) => Number(new RegExp(`${name}="([^"]+)"`).exec(match[1] ?? '')?.[1])),
    );
    const sorted = (numbers: number[]): string => [...numbers].sort((a, b) => a - b).join();
    // One box is in the project's CRS, the extent as set (WMS 1.3.0 writes EPSG:4326 latitude first: sorted, the same).
    assert.ok(
      boxes.some((box) => sorted(box) === sorted(advertised)),
      `no box of ${sorted(advertised)}: ${boxes.map(sorted).join(' | ')}`,
    );

    // A group no longer published takes its formats with it: the API would refuse formats of nothing published.
    await tiles.getByRole('group', { name: 'Groups' }).getByLabel('base').uncheck();
    await form.getByRole('button', { name: 'Save service settings' }).click();
    await form.getByRole('status').getByText('Saved: wmts.').waitFor();
    const after = (await services()) as Services & { wmts: { groups: string[]; formats: Record<string, string[]> } };
    assert.deepEqual(after.wmts.groups, []);
    assert.equal(after.wmts.formats.base, undefined);
    assert.deepEqual(errors, []);
  });

  test('bad input is said in a sentence and leaves the project as it was', async () => {
    const form = page.getByRole('form', { name: 'Service settings' });
    await form.getByLabel(/^Advertised CRSs/).fill('EPSG:999999');
    await form.getByRole('button', { name: 'Save service settings' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    const said = await alert.innerText();
    assert.doesNotMatch(said, /HTTP|^\{/, said);
    assert.match(said, /^[A-Z].*\.$/, said);
    assert.match(said, /EPSG:999999/, said);
    assert.deepEqual((await services()).wms.crs, []);
    await form.getByLabel(/^Advertised CRSs/).fill('');
  });

  test('the tab fits a 390 px phone and passes the accessibility check', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    await screenshot(page, 'services-phone');
    await page.setViewportSize({ width: 1280, height: 860 });
    assert.ok(width <= 390, `the services page is ${width} px wide at 390 px`);
    await checkAccessibility(page, 'the services page');
    await screenshot(page, 'services');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: 'Copy the WFS GetCapabilities URL' }).click();
    await page.getByRole('status').getByText('The WFS GetCapabilities URL was copied.').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, (await services()).endpoints.wfs);
    assert.deepEqual(errors, []);
  });
});
