/**
 * The web console's history tab in Chromium against a real Steward and QGIS Server: the versions
 * of a project, the difference of one with the newest, and its restore after a confirmation
 * (refused, naming the layer, when a layer's data file is gone, until forced). Checked with
 * axe-core and screenshotted into test/screenshots/.
 */
import assert from 'node:assert/strict';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { type Browser, type Page } from 'playwright-core';

import { checkAccessibility, launchBrowser, openPage, screenshot } from './support/browser.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, test } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { type Stack, startStack } from './support/stack.js';
import { fillStyle, polygonLayer } from './support/write-bodies.js';

interface Version {
  id: string;
  summary: string;
}

const PROJECT = 'annals';

describe('web console history', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let fixtures: Fixtures;

  const call = async (method: string, path: string, body?: unknown, status = 200): Promise<unknown> => {
    const reply = await stack.call(method, `/api/projects/${PROJECT}${path}`, body);
    assert.equal(reply.status, status, `${method} ${path}: ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  const versions = async (): Promise<Version[]> =>
    ((await call('GET', '/versions')) as { versions: Version[] }).versions;
  const versionXml = async (id: string): Promise<string> =>
    (await fetch(`${stack.api.url}/api/projects/${PROJECT}/versions/${id}`)).text();
  /** The centre pixel of the districts layer as QGIS Server draws it now. */
  const districtsCentre = async (): Promise<number[]> => {
    const reply = await fetch(`${stack.api.url}/api/projects/${PROJECT}/layers/districts/map`);
    assert.equal(reply.status, 200);
    const image = decodePng(Buffer.from(await reply.arrayBuffer()));
    return image.pixel(Math.floor(image.width / 2), Math.floor(image.height / 2));
  };
  const rowOf = (summary: string) => page.getByRole('row', { name: new RegExp(`\\b${summary}$`) });

  before(async () => {
    fixtures = makeFixtures();
    [stack, browser] = await Promise.all([startStack({ dataRoots: [fixtures.dir] }), launchBrowser()]);
    ({ page, errors } = await openPage(browser, stack.api.url));
    assert.equal((await stack.call('POST', '/api/projects', { name: PROJECT, author: 'Ada' })).status, 201);
    await call('POST', '/layers', polygonLayer('districts', fixtures.geopackage), 201);
    await call('POST', '/styles/red', fillStyle('red', '#ff0000'), 201);
    await call('POST', '/layers/districts/style', { name: 'red', current: true });
    await call('PATCH', '', { title: 'Annals' });
  });

  after(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(fixtures.dir, { recursive: true, force: true });
  });

  test('lists the versions newest first and shows how one differs from the newest', async () => {
    await page.goto(`/projects/${PROJECT}/history`);
    await page.getByRole('heading', { name: 'Versions' }).waitFor();
    await rowOf("changed the project's title").waitFor();
    const listed = await versions();
    const rows = page.getByRole('row');
    assert.equal(await rows.count(), listed.length + 1, 'a row a version and the header');
    assert.match(await rows.nth(1).innerText(), new RegExp(`^${listed[0]?.id}\\s.*127\\.0\\.0\\.1\\s+changed`));
    assert.equal(await page.getByRole('link', { name: 'History' }).getAttribute('aria-current'), 'page');

    const added = listed.find((version) => version.summary === 'added layer districts') as Version;
    await page.getByRole('button', { name: added.id, exact: true }).click();
    await page.getByRole('heading', { name: `Version ${added.id}: added layer districts` }).waitFor();
    const facts = page.locator('dl.facts');
    await facts.waitFor();
    const text = await facts.innerText();
    assert.match(text, /Layers added\s+none/);
    assert.match(text, /Layers changed\s+districts:.*style/);
    assert.match(text, /Settings\s+.*title/);
    assert.match(text, /Styles\s+added red; removed none; changed none/);
    await page.getByText("The project file's difference").click();
    assert.match(await page.locator('pre.diff').innerText(), /^\+.*<title>Annals<\/title>/m);
    assert.deepEqual(errors, []);
    await checkAccessibility(page, 'the history tab with a difference');
    await screenshot(page, 'project-history');
  });

  test('restores a version after a confirmation, and the map is as it was', async () => {
    const listed = await versions();
    const added = listed.find((version) => version.summary === 'added layer districts') as Version;
    const [red, black] = [await districtsCentre(), await versionXml(added.id)];
    assert.ok((red[0] ?? 0) > 200 && (red[1] ?? 255) < 50, `red before the restore: ${red.join(',')}`);

    await page.getByRole('button', { name: 'Restore this version' }).click();
    const dialog = page.getByRole('dialog', { name: `Restore version ${added.id}?` });
    await dialog.waitFor();
    await checkAccessibility(page, 'the restore confirmation');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal((await versions()).length, listed.length, 'nothing restored on Cancel');

    await page.getByRole('button', { name: 'Restore this version' }).click();
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    await rowOf(`restored version ${added.id}`).waitFor();
    const [newest] = await versions();
    assert.equal(newest?.summary, `restored version ${added.id}`);
    assert.equal(await stack.storage.projectXml(PROJECT), black, 'the project file as the version had it');
    const drawn = await districtsCentre();
    assert.notDeepEqual(drawn, red, 'QGIS Server draws the restored project at once');
    assert.deepEqual(errors, []);
  });

  test('a restore that would break layers names them and needs the force box', async () => {
    const copy = join(fixtures.dir, 'gone.gpkg');
    copyFileSync(fixtures.geopackage, copy);
    await call('POST', '/layers', polygonLayer('parcels', copy), 201);
    const withParcels = (await versions())[0] as Version;
    await call('DELETE', '/layers/parcels');
    rmSync(copy);
    const count = (await versions()).length;

    await page.goto(`/projects/${PROJECT}/history`);
    await page.getByRole('button', { name: withParcels.id, exact: true }).click();
    await page.getByRole('button', { name: 'Restore this version' }).click();
    const dialog = page.getByRole('dialog', { name: `Restore version ${withParcels.id}?` });
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    const alert = dialog.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /"parcels".*force/);
    assert.equal((await versions()).length, count, 'nothing written when refused');
    await screenshot(page, 'project-history-refused');

    await dialog.getByLabel(/Restore even if layers read data files that are gone/).check();
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    await dialog.waitFor({ state: 'hidden' });
    await rowOf(`restored version ${withParcels.id}`).waitFor();
    assert.equal(await stack.storage.projectXml(PROJECT), await versionXml(withParcels.id));
    assert.deepEqual(errors, []);
  });
});
