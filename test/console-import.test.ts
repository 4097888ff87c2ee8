/**
 * Import into PostGIS in Chromium against a real Steward, GDAL and PostgreSQL: from the add-layer
 * dialog's PostGIS tables, a GeoPackage of the upload root is imported with a progress bar, the new
 * table is listed and picked as the layer's datasource; a refusal is said in words.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { type Page } from 'playwright-core';

import { checkAccessibility } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { after, before, describe, test } from './support/node-test.js';
import { writePoints } from './support/points.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type Stack, startStack } from './support/stack.js';

const FEATURES = 2000;

describe('web console: import into PostGIS', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  let database: TestDatabase;

  before(async () => {
    database = await startTestDatabase();
    run = await startConsoleRun(
      'console-import',
      (data) => {
        writePoints(join(data, 'walks.gpkg'), FEATURES);
        return startStack({ dataRoots: [data], uploadRoot: data });
      },
      (server) => server.api.url,
    );
    ({ server: stack, page, errors } = run);
    assert.equal((await stack.call('POST', '/api/projects', { name: 'trails', author: 'Ada' })).status, 201);
  });

  after(async () => {
    await run?.close();
    await database?.stop();
  });

  test('a file is imported into a table, which is then offered as the datasource', async () => {
    await page.goto('/projects/trails');
    await page.getByRole('button', { name: 'Add layer' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a layer' });
    await dialog.getByRole('radio', { name: 'PostGIS tables' }).check();
    await dialog.getByLabel('Connection service').fill(database.service);
    await dialog.getByRole('button', { name: 'List tables' }).click();
    const form = dialog.getByRole('form', { name: `Import into service ${database.service}` });
    await form.getByLabel('Source file').fill('walks.gpkg');
    await form.getByLabel('Table', { exact: true }).fill('walks');
    await form.getByRole('button', { name: 'Import' }).click();
    await form
      .getByRole('status')
      .getByText(`succeeded: ${FEATURES.toLocaleString('en')} rows in the table`)
      .waitFor();
    const rows = await database.sql<{ n: string }>('SELECT count(*)::text AS n FROM public.walks');
    assert.equal(Number(rows[0]?.n), FEATURES);
    await dialog.getByRole('button', { name: /^Use walks/ }).click();
    assert.match(
      await dialog.getByLabel('Datasource', { exact: true }).inputValue(),
      /table="public"\."walks" \(geom\)/,
    );

    await form.getByRole('button', { name: 'Import' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    const said = await alert.innerText();
    assert.match(said, /exists/, said);
    assert.doesNotMatch(said, /HTTP|^\{/, said);
    await checkAccessibility(page, 'the import form');
    assert.deepEqual(errors, []);
  });
});
