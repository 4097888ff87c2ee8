/**
 * The console shows only what one may do, in Chromium against a Steward with access control: a
 * viewer (read of one project) sees that project and its map but no control that changes it nor
 * the administrators' pages; a writer sees the project's changes but not the administrators'
 * pages; the bootstrap administrator sees everything.
 */
import assert from 'node:assert/strict';

import { type Browser, type Page } from 'playwright-core';

import { checkAccessibility, launchBrowser, openPage, screenshot } from './support/browser.js';
import { makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';
import { polygonLayer } from './support/write-bodies.js';

const ADMIN = 'console-permissions-admin-token';

/** The controls that change project town, as the map page names them. */
const WRITE_CONTROLS = [
  ['button', 'Add layer'],
  ['button', 'Edit the style of districts'],
  ['button', 'Change the source of districts'],
  ['button', 'Remove layer districts'],
  ['button', 'Move districts up'],
  ['button', 'Properties of districts'],
] as const;

/** The navigation to the administrators' pages. */
const ADMIN_LINKS = ['Instances', 'Server', 'Access'];

describe('web console: only what one may do', () => {
  let stack: Stack;
  let browser: Browser;
  const tokens: Record<string, string> = {};
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const reply = await apiCall(stack.api.url, method, path, body, ADMIN);
    assert.ok(reply.status < 300, `${method} ${path}: ${JSON.stringify(reply.body)}`);
    return reply.body;
  };

  before(async () => {
    const fixtures = makeFixtures();
    [stack, browser] = await Promise.all([startStack({ apiToken: ADMIN }), launchBrowser()]);
    for (const name of ['town', 'harbour']) await call('POST', '/api/projects', { name, author: 'Ada' });
    await call('POST', '/api/projects/town/layers', polygonLayer('districts', fixtures.geopackage));
    for (const access of ['read', 'write']) {
      await call('PUT', `/api/roles/town-${access}`, { projects: { town: { access } } });
      const made = (await call('POST', '/api/tokens', { name: access, roles: [`town-${access}`] })) as {
        token: string;
      };
      tokens[access] = made.token;
    }
    tokens['admin'] = ADMIN;
  });

  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** A page of its own (fresh storage) holding the token. */
  const pageWith = async (token: string): Promise<{ page: Page; errors: string[] }> => {
    const opened = await openPage(browser, stack.api.url);
    await opened.page.context().addInitScript((kept) => sessionStorage.setItem('steward.token', kept), token);
    return opened;
  };

  const count = (page: Page, role: 'button' | 'link', name: string): Promise<number> =>
    page.getByRole(role, { name, exact: true }).count();

  const sections = async (page: Page): Promise<string[]> =>
    page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allInnerTexts();

  test('a viewer sees the project and its map, and nothing that changes it nor the Access page', async () => {
    const { page, errors } = await pageWith(tokens['read'] ?? '');
    await page.goto('/');
    await page.getByRole('link', { name: 'town', exact: true }).waitFor();
    assert.equal(await count(page, 'link', 'harbour'), 0, 'the project it may not read is not listed');
    assert.equal(await count(page, 'button', 'Delete project town'), 0);
    assert.equal(await page.getByRole('form', { name: 'New project' }).count(), 0);
    assert.equal(await page.getByRole('checkbox', { name: 'Pin project town' }).count(), 0);
    assert.deepEqual(await sections(page), ['Projects', 'Health', 'API reference']);

    await page.getByRole('link', { name: 'town', exact: true }).click();
    await page.getByTestId('read-only').waitFor();
    await page.getByTestId('project-map').waitFor();
    await page.getByRole('button', { name: 'Styles of districts' }).waitFor();
    for (const [role, name] of WRITE_CONTROLS) assert.equal(await count(page, role, name), 0, name);
    await checkAccessibility(page, "a viewer's project page");
    await screenshot(page, 'permissions-viewer-project');

    await page.getByRole('button', { name: 'Styles of districts' }).click();
    const styles = page.getByRole('dialog', { name: 'Styles of districts' });
    await styles.getByRole('button', { name: 'Download default as QML' }).waitFor();
    assert.equal(await styles.getByRole('button', { name: 'Upload the style' }).count(), 0);
    await styles.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('link', { name: 'Services', exact: true }).click();
    await page.getByRole('heading', { name: 'Service URLs' }).waitFor();
    assert.equal(await count(page, 'button', 'Save service settings'), 0);
    await page.getByRole('link', { name: 'Publish', exact: true }).click();
    await page.getByRole('button', { name: 'Download the .qgz' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Replace from QGIS Desktop' }).count(), 0);

    await page.goto('/access');
    await page.getByRole('heading', { name: 'This page needs an administrator' }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Access', exact: true }).count(), 0);
    await checkAccessibility(page, 'the refusal of an administrator page');
    await screenshot(page, 'permissions-viewer-access');
    assert.deepEqual(errors, []);
  });

  test("a writer sees the project's changes, but not the Access page", async () => {
    const { page, errors } = await pageWith(tokens['write'] ?? '');
    await page.goto('/projects/town');
    await page.getByRole('button', { name: 'Add layer' }).waitFor();
    for (const [role, name] of WRITE_CONTROLS) await page.getByRole(role, { name, exact: true }).waitFor();
    assert.equal(await page.getByTestId('read-only').count(), 0);
    assert.deepEqual(await sections(page), ['Projects', 'Health', 'API reference']);
    await screenshot(page, 'permissions-writer-project');
    await page.getByRole('button', { name: 'Styles of districts' }).click();
    const styles = page.getByRole('dialog', { name: 'Styles of districts' });
    await styles.getByRole('button', { name: 'Upload the style' }).waitFor();
    await styles.getByRole('button', { name: 'Close' }).click();
    await page.goto('/projects/town/services');
    await page.getByRole('button', { name: 'Save service settings' }).waitFor();
    await page.goto('/server');
    await page.getByRole('heading', { name: 'This page needs an administrator' }).waitFor();
    assert.deepEqual(errors, []);
  });

  test('a role narrowed while the page is open: a refused change, or the tab shown again, takes its controls away', async () => {
    await call('PUT', '/api/roles/town-narrowed', { projects: { town: { access: 'write' } } });
    const made = (await call('POST', '/api/tokens', { name: 'narrowed', roles: ['town-narrowed'] })) as {
      token: string;
    };
    const { page, errors } = await pageWith(made.token);
    await page.goto('/projects/town');
    await page.getByRole('button', { name: 'Remove layer districts', exact: true }).waitFor();

    // Narrowed to read: the page still shows what it knew, until the API refuses a change.
    await call('PUT', '/api/roles/town-narrowed', { projects: { town: { access: 'read' } } });
    await page.getByRole('button', { name: 'Remove layer districts', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove layer “districts”?' });
    await dialog.getByRole('button', { name: 'Remove districts' }).click();
    await dialog.getByRole('alert').waitFor();
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await page.getByTestId('read-only').waitFor();
    for (const [role, name] of WRITE_CONTROLS) assert.equal(await count(page, role, name), 0, name);
    assert.equal(((await call('GET', '/api/projects/town/layers')) as unknown[]).length, 1, 'the layer is kept');

    // Widened again: the tab, shown anew after being hidden, asks again what it may do.
    await call('PUT', '/api/roles/town-narrowed', { projects: { town: { access: 'write' } } });
    await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    for (const [role, name] of WRITE_CONTROLS) await page.getByRole(role, { name, exact: true }).waitFor();
    assert.equal(await page.getByTestId('read-only').count(), 0);
    assert.deepEqual(
      errors.filter((error) => !/403/.test(error)),
      [],
      'no error but the refused change',
    );
  });

  test('the bootstrap administrator sees everything', async () => {
    const { page, errors } = await pageWith(tokens['admin'] ?? '');
    await page.goto('/');
    await page.getByRole('button', { name: 'Delete project harbour' }).waitFor();
    await page.getByRole('checkbox', { name: 'Pin project town' }).waitFor();
    assert.deepEqual(await sections(page), ['Projects', 'Health', ...ADMIN_LINKS, 'API reference']);
    await page.getByRole('link', { name: 'town', exact: true }).click();
    for (const [role, name] of WRITE_CONTROLS) await page.getByRole(role, { name, exact: true }).waitFor();
    await page.getByLabel('View the map as').waitFor();
    await page.getByRole('link', { name: 'Access', exact: true }).click();
    await page.getByRole('heading', { name: 'Access', exact: true }).waitFor();
    await screenshot(page, 'permissions-admin-access');
    assert.deepEqual(errors, []);
  });
});
