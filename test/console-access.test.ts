/**
 * Tokens and roles in Chromium against a real Steward: a role made from the form, a token given it
 * whose secret is shown once and works, then revoked once confirmed, each checked in the API.
 */
import assert from 'node:assert/strict';

import { type Browser, type Page } from 'playwright-core';

import { checkAccessibility, launchBrowser, openPage, screenshot } from './support/browser.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

/** The bootstrap administrator's token: with it the API asks every request for one. */
const ADMIN_TOKEN = 'console-access-admin-token';

describe('web console: tokens and roles', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let secret = '';
  const admin = async (method: string, path: string) => {
    const response = await fetch(stack.api.url + path, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    return (await response.json()) as unknown;
  };
  const whoami = async (token: string) => {
    const response = await fetch(`${stack.api.url}/api/whoami`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, body: (await response.json()) as unknown };
  };

  before(async () => {
    [stack, browser] = await Promise.all([startStack({ apiToken: ADMIN_TOKEN }), launchBrowser()]);
    ({ page, errors } = await openPage(browser, stack.api.url));
    await page.context().addInitScript((token) => sessionStorage.setItem('steward.token', token), ADMIN_TOKEN);
  });

  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  test('a role is made from the form and listed', async () => {
    await page.goto('/');
    await page.getByRole('link', { name: 'Access', exact: true }).click();
    await page.getByRole('heading', { name: 'Access', exact: true }).waitFor();
    const form = page.getByRole('form', { name: 'Make or replace a role' });
    await form.getByRole('button', { name: 'Save the role' }).click();
    await form.getByRole('alert').getByText('The role needs a name.').waitFor();
    await form.getByLabel('Role name').fill('viewer');
    await form.getByLabel('Projects (names separated by commas').fill('town');
    await form.getByLabel('Access to them').selectOption('read');
    await form.getByRole('button', { name: 'Save the role' }).click();
    await form.getByRole('status').getByText('Role viewer saved: read town.').waitFor();
    await page.getByRole('region', { name: 'Roles' }).getByText('read town', { exact: true }).waitFor();
    assert.deepEqual(await admin('GET', '/api/roles/viewer'), { projects: { town: { access: 'read' } } });
    await checkAccessibility(page, 'the access page');
    assert.deepEqual(errors, []);
  });

  test('a role is edited from its row, keeping the layer rules the form does not show', async () => {
    const rules = { projects: { town: { access: 'read', layers: { roads: { read: false } } } } };
    const put = await fetch(`${stack.api.url}/api/roles/viewer`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(rules),
    });
    assert.equal(put.status, 200);
    await page.reload();
    await page.getByRole('button', { name: 'Edit role viewer' }).click();
    const form = page.getByRole('form', { name: 'Make or replace a role' });
    await form.getByRole('heading', { name: 'Edit role viewer' }).waitFor();
    assert.equal(await form.getByLabel('Role name').inputValue(), 'viewer');
    assert.equal(await form.getByLabel('Projects (names separated by commas').inputValue(), 'town');
    await form.getByLabel('Projects (names separated by commas').fill('town, parcels');
    await form.getByLabel('Access to them').selectOption('write');
    await form.getByRole('button', { name: 'Save the role' }).click();
    await form.getByRole('status').getByText('Role viewer saved: write town; write parcels.').waitFor();
    assert.deepEqual(await admin('GET', '/api/roles/viewer'), {
      projects: { town: { access: 'write', layers: { roads: { read: false } } }, parcels: { access: 'write' } },
    });
    assert.deepEqual(errors, []);
  });

  test('a token is made with the role; its secret is shown once and works', async () => {
    const form = page.getByRole('form', { name: 'New API token' });
    await form.getByLabel('Token name').fill('ci');
    await form.getByRole('checkbox', { name: 'viewer' }).check();
    await form.getByRole('button', { name: 'Make the token' }).click();
    const shown = form.getByLabel('Secret of token ci');
    await shown.waitFor();
    secret = await shown.innerText();
    assert.ok(secret.length >= 20, `a secret: ${secret}`);
    await form.getByText('it is shown this once').waitFor();
    await page.getByRole('row', { name: /ci\s+viewer/ }).waitFor();
    await screenshot(page, 'access-token-made');
    assert.deepEqual(await whoami(secret), {
      status: 200,
      body: { name: 'ci', roles: ['viewer'], admin: false, kind: 'token' },
    });
    const listed = (await admin('GET', '/api/tokens')) as { name: string; roles: string[] }[];
    assert.deepEqual(
      listed.map(({ name, roles }) => ({ name, roles })),
      [{ name: 'ci', roles: ['viewer'] }],
    );
    assert.equal(JSON.stringify(listed).includes(secret), false, 'the list never shows the secret');
    await page.setViewportSize({ width: 390, height: 844 });
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    await screenshot(page, 'access-390');
    await page.setViewportSize({ width: 1280, height: 860 });
    assert.ok(width <= 390, `the access page is ${width} px wide at 390 px`);
    await page.reload();
    await page.getByRole('row', { name: /ci\s+viewer/ }).waitFor();
    assert.equal(await page.getByText(secret).count(), 0, 'shown once: gone after a reload');
    assert.deepEqual(errors, []);
  });

  test('a token is revoked once confirmed', async () => {
    const revoke = page.getByRole('button', { name: 'Revoke token ci' });
    await revoke.click();
    const dialog = page.getByRole('dialog', { name: 'Revoke token “ci”?' });
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await whoami(secret)).status, 200);
    await revoke.click();
    await dialog.getByRole('button', { name: 'Revoke it' }).click();
    await page.getByText('No token yet.').waitFor();
    assert.equal((await whoami(secret)).status, 401);
    assert.deepEqual(await admin('GET', '/api/tokens'), []);
    assert.deepEqual(errors, []);
  });
});
