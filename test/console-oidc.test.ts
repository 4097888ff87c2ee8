/**
 * The console's login through OpenID Connect, in Chromium: a real provider (test/support/
 * oidc-provider.ts) with its own login and consent pages; the console sends the person there
 * (authorization code with PKCE), takes the token back through the API, and then shows only the
 * projects the person's roles let them read.
 */
import assert from 'node:assert/strict';

import { type Browser } from 'playwright-core';

import { launchBrowser, openPage, screenshot } from './support/browser.js';
import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';
import { startTestProvider, stewardSettings, type TestProvider } from './support/oidc-provider.js';
import { type Stack, startStack } from './support/stack.js';

const ADMIN = 'the bootstrap administrator of the console login test';

describe('web console: login through OpenID Connect', () => {
  let provider: TestProvider;
  let stack: Stack;
  let browser: Browser;

  before(async () => {
    provider = await startTestProvider({ machines: {}, people: { ann: ['viewer'] } });
    [stack, browser] = await Promise.all([
      startStack(
        {
          apiToken: ADMIN,
          oidc: stewardSettings(provider),
        },
        {},
        'filesystem',
        'development',
      ),
      launchBrowser(),
    ]);
    provider.allowRedirect(`${stack.api.url}/login/callback`);
    for (const name of ['town', 'harbour'])
      assert.equal((await apiCall(stack.api.url, 'POST', '/api/projects', { name, author: 'a' }, ADMIN)).status, 201);
    const viewer = { projects: { town: { access: 'read' } } };
    assert.equal((await apiCall(stack.api.url, 'PUT', '/api/roles/viewer', viewer, ADMIN)).status, 201);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
    await provider?.stop();
  });

  test("logs in at the provider's pages and sees only the projects its roles permit", async () => {
    const { page, errors } = await openPage(browser, stack.api.url);
    await page.goto('/');
    await page.getByRole('button', { name: 'Log in with OpenID Connect' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.locator('input[name=login]').fill('ann');
    await page.locator('input[name=password]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.origin === stack.api.url && url.pathname === '/');
    await page.getByRole('link', { name: 'town', exact: true }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'harbour', exact: true }).count(), 0);
    const token = await page.evaluate(() => sessionStorage.getItem('steward.token'));
    assert.ok(token !== null && token.split('.').length === 3, 'the access token, a JWT, is the bearer token');
    assert.deepEqual((await apiCall(stack.api.url, 'GET', '/api/whoami', undefined, token)).body, {
      name: 'ann',
      roles: ['viewer'],
      admin: false,
      kind: 'oidc',
    });
    await screenshot(page, 'console-oidc-login');
    assert.deepEqual(errors, []);
  });

  test('refuses a callback the tab did not start', async () => {
    const { page } = await openPage(browser, stack.api.url);
    await page.goto('/login/callback?code=forged&state=forged');
    await page.getByRole('alert').getByText('This login was not started from this tab').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('steward.token')), null);
  });
});
