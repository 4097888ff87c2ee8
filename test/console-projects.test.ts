/**
 * The projects page in Chromium with more projects than a page holds: one API request for the
 * list, a search box, headings that sort (aria-sort) and pages, each checked against the API.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { type Page } from 'playwright-core';

import { checkAccessibility, screenshot } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

/** More than the page's 50, so that it pages. */
const PROJECTS = 62;
const name = (index: number): string => `p${String(index).padStart(2, '0')}`;

describe('web console: many projects', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  /** The list requests the page made: GET /api/projects and /api/project-summaries, and any per project. */
  const listRequests: string[] = [];

  const rowNames = async (): Promise<string[]> =>
    page.locator('table tbody tr td[data-label="Name"] a').allTextContents();
  const heading = (label: string) => page.getByRole('columnheader', { name: label });
  /** Waits until the table's first row is project `project`. */
  const firstRow = (project: string) =>
    page.locator('tbody tr').first().getByRole('link', { name: project, exact: true }).waitFor();

  before(async () => {
    run = await startConsoleRun(
      'console-projects',
      (data) => startStack({ dataRoots: [data] }),
      (server) => server.api.url,
    );
    ({ server: stack, page } = run);
    for (let index = 0; index < PROJECTS; index++) {
      const created = await stack.call('POST', '/api/projects', {
        name: name(index),
        author: index % 2 ? 'Ada' : 'Zoe',
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
    }
    await stack.call('PATCH', '/api/projects/p07', { title: 'Harbour survey' });
    for (const layer of ['districts', 'roads']) {
      const datasource = `${join(run.demo, 'town.gpkg')}|layername=${layer}`;
      const added = await stack.call('POST', '/api/projects/p33/layers', { datasource, name: layer, type: 'vector' });
      assert.equal(added.status, 201, JSON.stringify(added.body));
    }
    page.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith('/api/project')) listRequests.push(`${request.method()} ${path}`);
    });
  });

  after(() => run?.close());

  test('lists the first page in one request, with the total', async () => {
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Pages of projects' }).getByText('Projects 1–50 of 62').waitFor();
    assert.deepEqual(
      await rowNames(),
      Array.from({ length: 50 }, (_, index) => name(index)),
    );
    assert.deepEqual(listRequests, ['GET /api/project-summaries'], 'one request for the list, none per project');
    assert.equal(await heading('Name').getAttribute('aria-sort'), 'ascending');
    assert.equal(await heading('Layers').getAttribute('aria-sort'), 'none');
    await checkAccessibility(page, 'the projects page with pages');
    await screenshot(page, 'projects-paged');
  });

  test('pages forward and back', async () => {
    const pager = page.getByRole('navigation', { name: 'Pages of projects' });
    await pager.getByRole('button', { name: 'Next page' }).click();
    await pager.getByText('Projects 51–62 of 62').waitFor();
    assert.deepEqual(
      await rowNames(),
      Array.from({ length: 12 }, (_, index) => name(50 + index)),
    );
    assert.equal(await pager.getByRole('button', { name: 'Next page' }).isDisabled(), true);
    await pager.getByRole('button', { name: 'Previous page' }).click();
    await pager.getByText('Projects 1–50 of 62').waitFor();
  });

  test('sorts by a heading, then the other way', async () => {
    await heading('Layers').getByRole('button').click();
    await page.locator('th[aria-sort="ascending"]', { hasText: 'Layers' }).waitFor();
    await heading('Layers').getByRole('button').click();
    await page.locator('th[aria-sort="descending"]', { hasText: 'Layers' }).waitFor();
    await firstRow('p33');
    assert.equal(await page.locator('tbody tr').first().locator('td[data-label="Layers"]').textContent(), '2');
    assert.equal(await heading('Name').getAttribute('aria-sort'), 'none');
    await heading('Author').getByRole('button').click();
    await page.locator('th[aria-sort="ascending"]', { hasText: 'Author' }).waitFor();
    await firstRow('p01');
    const authors = await page.locator('tbody td[data-label="Author"]').allTextContents();
    assert.deepEqual(
      authors,
      [...Array<string>(31).fill('Ada'), ...Array<string>(19).fill('Zoe')],
      'the 31 projects of Ada come first',
    );
  });

  test('sorts from a picker on a 390 px screen, where the headings are hidden', async () => {
    const wide = page.viewportSize();
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const picker = page.getByLabel('Sort by');
      assert.equal(await picker.isVisible(), true);
      const hidden = await page.locator('table thead').boundingBox();
      assert.ok(hidden && hidden.width <= 1, 'the headings are hidden, for screen readers only');
      await picker.selectOption({ label: 'Most layers' });
      await firstRow('p33');
      assert.equal(await heading('Layers').getAttribute('aria-sort'), 'descending');
      await checkAccessibility(page, 'the projects page at 390 px');
      await screenshot(page, 'projects-narrow');
      await picker.selectOption({ label: 'Name, A to Z' });
      await firstRow('p00');
    } finally {
      if (wide) await page.setViewportSize(wide);
    }
    assert.equal(await page.getByLabel('Sort by').isVisible(), false, 'wide screens sort by the headings');
  });

  test('searches names and titles, from the first page', async () => {
    const pager = page.getByRole('navigation', { name: 'Pages of projects' });
    await pager.getByRole('button', { name: 'Next page' }).click();
    await pager.getByText('Projects 51–62 of 62').waitFor();
    const before = listRequests.length;
    await page.getByLabel('Search projects').fill('harbour');
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    assert.deepEqual(await rowNames(), ['p07']);
    assert.equal(await page.getByRole('navigation', { name: 'Pages of projects' }).count(), 0, 'one page: no pager');
    assert.equal(listRequests.length - before, 1, 'the search is sent once typing pauses, for the first page');
    await page.getByLabel('Search projects').fill('p6');
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 2);
    assert.deepEqual(await rowNames(), ['p60', 'p61'], 'sorted by name, as the picker left it');
    await page.getByLabel('Search projects').fill('nothing');
    await page.getByText('No project matches “nothing”.').waitFor();
    assert.ok(
      listRequests.every((request) => request === 'GET /api/project-summaries'),
      listRequests.join(', '),
    );
    assert.deepEqual(run.errors, []);
  });
});
