/**
 * Publishing in Chromium against a real Steward and QGIS Server: a project downloaded as a .qgz
 * from its Publish page, published again under another name from the projects page, a
 * replacement that waits for the person's confirmation, and bundles and projects dropped on the
 * projects page (a drop made in the page with a DataTransfer of the file); a data file uploaded
 * from the add-layer dialog and drawn, replaced only when asked again.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { strFromU8, unzipSync } from 'fflate';
import { type Page } from 'playwright-core';

import { centreWhen, checkAccessibility, screenshot } from './support/browser.js';
import { type ConsoleRun, startConsoleRun } from './support/console-run.js';
import { createTownWithDistricts } from './support/demo-town.js';
import { after, before, describe, test } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';

describe('web console: publishing', () => {
  let run: ConsoleRun<Stack>;
  let stack: Stack;
  let page: Page;
  let errors: string[];
  let demo: string;
  let dataDir: string;
  const qgz = (): string => join(dataDir, 'town.qgz');

  before(async () => {
    run = await startConsoleRun(
      'console-publish',
      (data) => {
        const uploads = join(dirname(data), 'uploads');
        mkdirSync(uploads);
        return startStack({ dataRoots: [data, uploads], uploadRoot: uploads });
      },
      (server) => server.api.url,
    );
    ({ server: stack, page, errors, demo, dataDir } = run);
    await createTownWithDistricts(stack, demo);
  });

  after(() => run?.close());

  /** Drags a file named `name` holding `bytes` over the page, as from a file manager; drops it unless `hold`. */
  async function dragFile(name: string, bytes: Buffer, hold = false): Promise<void> {
    const dataTransfer = await page.evaluateHandle(
      ({ file, data }) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([Uint8Array.from(atob(data), (char) => char.charCodeAt(0))], file));
        return transfer;
      },
      { file: name, data: bytes.toString('base64') },
    );
    const target = page.getByRole('heading', { name: 'Projects', level: 1 });
    await target.dispatchEvent('dragenter', { dataTransfer });
    await target.dispatchEvent('dragover', { dataTransfer });
    if (!hold) await target.dispatchEvent('drop', { dataTransfer });
  }

  test('a project downloads as the .qgz QGIS Desktop opens', async () => {
    await page.goto('/projects/town');
    await page.getByRole('link', { name: 'Publish' }).click();
    await page.getByRole('heading', { name: 'town: publish' }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download the .qgz' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'town.qgz');
    await download.saveAs(qgz());
    const entries = Object.keys(unzipSync(readFileSync(qgz())));
    assert.ok(
      entries.some((entry) => entry.endsWith('.qgs')),
      `the .qgz holds a .qgs: ${entries.join(', ')}`,
    );
    await page.getByRole('status').getByText('Saved as town.qgz.').waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    await page.setViewportSize({ width: 1280, height: 860 });
    assert.ok(width <= 390, `the publish page is ${width} px wide at 390 px`);
    await checkAccessibility(page, 'the publish page');
    await screenshot(page, 'publish');
    assert.deepEqual(errors, []);
  });

  test('a .qgz is published as a new project from the projects page; a wrong file is refused in words', async () => {
    await page.goto('/');
    const form = page.getByRole('form', { name: 'Publish a project file' });
    await form.getByLabel('Project to create or replace').fill('copy');
    const notAProject = join(dataDir, 'notes.qgz');
    writeFileSync(notAProject, 'not a zip');
    await form.getByLabel('Project file').setInputFiles(notAProject);
    await form.getByRole('button', { name: 'Publish' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    const said = await alert.innerText();
    assert.doesNotMatch(said, /HTTP|^\{/, said);
    assert.match(said, /^[A-Z].*\.$/, said);
    assert.deepEqual((await stack.call('GET', '/api/projects')).body, ['town']);

    await form.getByLabel('Project file').setInputFiles(qgz());
    await form.getByRole('button', { name: 'Publish' }).click();
    await form
      .getByRole('status')
      .getByText('Project copy was published; its check says every layer is valid.')
      .waitFor();
    await page.getByRole('link', { name: 'copy', exact: true }).waitFor();
    assert.deepEqual((await stack.call('GET', '/api/projects')).body, ['copy', 'town']);
    assert.deepEqual((await stack.call('GET', '/api/projects/copy/layers')).body, ['districts']);
    await checkAccessibility(page, 'the projects page after publishing');
    assert.deepEqual(errors, []);
  });

  test('a project whose layer reads a missing file is refused, then stored when asked, naming the layer', async () => {
    const files = unzipSync(readFileSync(qgz()));
    const qgsName = Object.keys(files).find((entry) => entry.endsWith('.qgs')) ?? '';
    const qgs = strFromU8(files[qgsName] ?? new Uint8Array());
    assert.ok(qgs.includes(join(demo, 'town.gpkg')), 'the project reads the demo file');
    const broken = join(dataDir, 'broken.qgs');
    writeFileSync(broken, qgs.split(join(demo, 'town.gpkg')).join(join(demo, 'gone.gpkg')));

    await page.goto('/');
    const form = page.getByRole('form', { name: 'Publish a project file' });
    await form.getByLabel('Project to create or replace').fill('broken');
    await form.getByLabel('Project file').setInputFiles(broken);
    await form.getByRole('button', { name: 'Publish' }).click();
    const alert = form.getByRole('alert');
    await alert.getByText(/districts/).waitFor();
    assert.doesNotMatch(await alert.innerText(), /HTTP|^\{/);
    assert.deepEqual((await stack.call('GET', '/api/projects')).body, ['copy', 'town']);

    await form.getByLabel('Store it even if some layers are broken').check();
    await form.getByRole('button', { name: 'Publish', exact: true }).click();
    await form
      .getByRole('status')
      .getByText(/^Project broken was published; its check says/)
      .waitFor();
    const troubles = form.getByRole('list', { name: 'Published layers with problems' });
    await troubles.getByText(/districts \((broken|degraded)\)/).waitFor();
    await checkAccessibility(page, 'a published project with a broken layer');
    await screenshot(page, 'publish-broken');
    assert.deepEqual((await stack.call('GET', '/api/projects')).body, ['broken', 'copy', 'town']);
    assert.deepEqual(errors, []);
  });

  test('publishing over an existing project asks first', async () => {
    assert.equal((await stack.call('DELETE', '/api/projects/copy/layers/districts')).status, 200);
    await page.goto('/projects/copy/publish');
    const form = page.getByRole('form', { name: 'Replace copy from a file' });
    await form.getByLabel('Project file').setInputFiles(qgz());
    await form.getByRole('button', { name: 'Replace the project' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replace project “copy”?' });
    await dialog.getByText('A project named copy exists already.').waitFor();
    await screenshot(page, 'publish-replace');
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.deepEqual((await stack.call('GET', '/api/projects/copy/layers')).body, []);

    await form.getByRole('button', { name: 'Replace the project' }).click();
    await dialog.getByRole('button', { name: 'Replace copy' }).click();
    await form
      .getByRole('status')
      .getByText('Project copy was replaced; its check says every layer is valid.')
      .waitFor();
    assert.deepEqual((await stack.call('GET', '/api/projects/copy/layers')).body, ['districts']);
    assert.deepEqual(errors, []);
  });

  test('a bundle dropped on the projects page is published with its progress and check, and its map draws', async () => {
    const bundle = await fetch(`${stack.api.url}/api/projects/town/archive?data=true`);
    assert.equal(bundle.status, 200);
    await page.goto('/');
    const form = page.getByRole('form', { name: 'Publish a project file' });
    await form.getByText('Or drop a .qgz, .qgs or .zip bundle anywhere on this page to publish it.').waitFor();
    const bytes = Buffer.from(await bundle.arrayBuffer());
    await dragFile('dropped.zip', bytes, true);
    await page.getByText('Drop the project file to publish it').waitFor();
    await screenshot(page, 'publish-drop');
    await dragFile('dropped.zip', bytes);
    await page.getByText('Drop the project file to publish it').waitFor({ state: 'detached' });
    await form
      .getByRole('status')
      .getByText(/^Project dropped was published with 1 data file in .+; its check says every layer is valid\.$/)
      .waitFor();
    const progress = form.getByRole('progressbar', { name: 'Upload of dropped.zip' });
    assert.equal(await progress.evaluate((bar) => (bar as HTMLProgressElement).value), 1);
    assert.equal(await form.getByLabel('Project to create or replace').inputValue(), 'dropped');
    assert.deepEqual((await stack.call('GET', '/api/projects/dropped/layers')).body, ['districts']);
    await checkAccessibility(page, 'the projects page after a drop');

    await page.getByRole('link', { name: 'dropped', exact: true }).click();
    await page.getByRole('heading', { name: 'dropped', level: 1 }).waitFor();
    await centreWhen(page.getByTestId('project-map'), 'the dropped districts drawn', ([, , , alpha = 0]) => alpha > 0);
    assert.deepEqual(errors, []);
  });

  test('a dropped project with a broken layer is refused naming it, then published when asked; other files are refused', async () => {
    await page.goto('/');
    const form = page.getByRole('form', { name: 'Publish a project file' });
    await form.getByText(/^Or drop/).waitFor();
    await dragFile('notes.txt', Buffer.from('a list\n'));
    const alert = form.getByRole('alert');
    await alert
      .getByText('notes.txt is not a project: publish a .qgs, a .qgz or a .zip of a project and its data.')
      .waitFor();

    await dragFile('gone.qgs', readFileSync(join(dataDir, 'broken.qgs')));
    await alert.getByText(/districts/).waitFor();
    const projects = async (): Promise<string[]> => (await stack.call('GET', '/api/projects')).body as string[];
    assert.ok(!(await projects()).includes('gone'), 'nothing is stored before the person asks');
    await form.getByRole('button', { name: 'Publish gone.qgs anyway' }).click();
    await form
      .getByRole('status')
      .getByText(/^Project gone was published; its check says/)
      .waitFor();
    const troubles = form.getByRole('list', { name: 'Published layers with problems' });
    await troubles.getByText(/districts \((broken|degraded)\)/).waitFor();
    assert.ok((await projects()).includes('gone'));
    await checkAccessibility(page, 'a dropped project published with a broken layer');
    assert.deepEqual(errors, []);
  });

  test('a data file uploaded from the add-layer dialog is drawn; one of its name is replaced only when asked again', async () => {
    assert.equal((await stack.call('POST', '/api/projects', { name: 'parish', author: 'Ada' })).status, 201);
    const stored = join(dataDir, 'uploads', 'parish', 'parish.gpkg');
    const file = {
      name: 'parish.gpkg',
      mimeType: 'application/octet-stream',
      buffer: readFileSync(join(demo, 'town.gpkg')),
    };
    await page.goto('/projects/parish');
    await page.getByRole('button', { name: 'Add layer' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add a layer' });
    const upload = dialog.getByRole('group', { name: 'Upload a data file' });
    // The dialog with its upload fits a 390 px phone, every kind of source in view.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `the add-layer dialog is ${width} px wide at 390 px`);
      for (const control of [
        upload.getByRole('button', { name: 'Upload', exact: true }),
        dialog.getByRole('radio', { name: 'PostGIS tables' }),
        dialog.getByLabel('Data folder', { exact: true }),
        dialog.getByRole('button', { name: /^Use districts/ }),
        dialog.getByRole('group', { name: 'Datasource', exact: true }),
      ]) {
        const box = await control.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 390, JSON.stringify(box));
      }
      await screenshot(page, 'add-layer-upload-390');
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    await upload.getByLabel(/^Upload a data file/).setInputFiles(file);
    await upload.getByRole('button', { name: 'Upload', exact: true }).click();
    await upload.getByRole('status').getByText('parish.gpkg is uploaded: pick its layer below.').waitFor();
    await dialog.getByRole('list', { name: `Contents of ${dirname(stored)}` }).waitFor();
    await dialog.getByRole('button', { name: /^Use districts/ }).click();
    assert.equal(await dialog.getByLabel('Datasource').inputValue(), `${stored}|layername=districts`);
    await checkAccessibility(page, 'the add-layer dialog after an upload');
    await dialog.getByRole('button', { name: 'Add layer' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await centreWhen(
      page.getByTestId('project-map'),
      'drawn',
      ([r = 0, g = 0, b = 0]) => !(r === 255 && g === 255 && b === 255),
    );

    // The layer reads the file now: the same name is asked about first, and replaced on the second click.
    const first = statSync(stored).ino;
    await page.getByRole('button', { name: 'Add layer' }).first().click();
    await upload.getByLabel(/^Upload a data file/).setInputFiles(file);
    await upload.getByRole('button', { name: 'Upload', exact: true }).click();
    await upload
      .getByRole('alert')
      .getByText(/^parish\.gpkg is already in this project’s folder/)
      .waitFor();
    assert.equal(statSync(stored).ino, first, 'nothing is replaced before the second click');
    await upload.getByRole('button', { name: 'Replace parish.gpkg' }).click();
    await upload.getByRole('status').getByText('parish.gpkg is uploaded: pick its layer below.').waitFor();
    assert.notEqual(statSync(stored).ino, first, 'the file was written again');
    assert.deepEqual(readFileSync(stored), file.buffer);
    assert.deepEqual(errors, []);
  });
});
