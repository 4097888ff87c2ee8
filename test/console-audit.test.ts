/**
 * The audit log page in Chromium against a real Steward with access control on: the changes asked
 * of the API, newest first, as `GET /api/audit` answers them, and filtered by project and identity.
 */
import assert from 'node:assert/strict';

import { type Browser, type Page } from 'playwright-core';

import { checkAccessibility, launchBrowser, openPage, screenshot } from './support/browser.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

const ADMIN_TOKEN = 'console-audit-admin-token';

interface Entry {
  at: string;
  who: string | null;
  method: string;
  path: string;
  project: string | null;
  status: number;
}

describe('web console: the audit log', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(stack.api.url + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as unknown };
  };
  /** The table's rows as the page shows them: time, who, request, project, answer. */
  const rows = () =>
    page
      .getByRole('table', { name: 'Audit log, newest first' })
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
  const shown = (entries: Entry[]) =>
    entries.map((entry) => [
      entry.at.replace('T', ' ').replace('Z', ''),
      entry.who ?? '',
      `${entry.method} ${entry.path}`,
      entry.project ?? '',
      String(entry.status),
    ]);

  before(async () => {
    [stack, browser] = await Promise.all([startStack({ apiToken: ADMIN_TOKEN }), launchBrowser()]);
    ({ page, errors } = await openPage(browser, stack.api.url));
    await page.context().addInitScript((token) => sessionStorage.setItem('steward.token', token), ADMIN_TOKEN);
    for (const name of ['town', 'harbour'])
      assert.equal((await admin('POST', '/api/projects', { name, author: 'Ada' })).status, 201);
    assert.equal((await admin('POST', '/api/projects', { name: 'town', author: 'Ada' })).status, 409);
    assert.ok([200, 204].includes((await admin('DELETE', '/api/projects/harbour')).status));
  });

  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  test('the entries are shown newest first as the API keeps them, and filtered by project', async () => {
    await page.goto('/access');
    await page.getByRole('navigation', { name: 'Pages about access' }).getByRole('link', { name: 'Audit log' }).click();
    const all = (await admin('GET', '/api/audit')).body as Entry[];
    assert.equal(all.length, 4);
    await page.getByRole('status').getByText('4 entries.').waitFor();
    assert.deepEqual(await rows(), shown(all));
    assert.deepEqual(
      (await rows()).map((row) => row[2]),
      ['DELETE /api/projects/harbour', 'POST /api/projects', 'POST /api/projects', 'POST /api/projects'],
    );
    await checkAccessibility(page, 'the audit log');
    await screenshot(page, 'audit-log');

    const filters = page.getByRole('form', { name: 'Filter the audit log' });
    await filters.getByLabel('Project').fill('harbour');
    await filters.getByRole('button', { name: 'Show' }).click();
    const harbour = (await admin('GET', '/api/audit?project=harbour')).body as Entry[];
    assert.equal(harbour.length, 2);
    await page.getByRole('status').getByText('2 entries.').waitFor();
    assert.deepEqual(await rows(), shown(harbour));

    await filters.getByLabel('Project').fill('');
    await filters.getByLabel('Who').fill('nobody');
    await filters.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('status').getByText('No entry matches.').waitFor();
    assert.deepEqual(errors, []);
  });
});
