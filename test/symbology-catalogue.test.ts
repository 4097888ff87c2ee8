/** The symbology catalogues are written by PyQGIS (scripts/symbology-catalogue.py); this checks the committed ones. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { catalogueDir } from '../src/checkout.js';
import { test } from './support/node-test.js';
import { TEST_QGIS } from './support/qgis-runtime.js';

/** The line of a catalogue naming the QGIS release that wrote it, such as 3.44.16-Solothurn. */
const QGIS_VERSION_LINE = /^ {2}"qgis_version": "([^"]*)",$/m;

/** `3.44` of a catalogue written by QGIS 3.44.16-Solothurn. */
function minorRelease(catalogue: string): string | undefined {
  return QGIS_VERSION_LINE.exec(catalogue)?.[1]?.split('.').slice(0, 2).join('.');
}

const GENERATOR = join(catalogueDir(), '..', '..', '..', 'scripts', 'symbology-catalogue.py');

test(`the generator run again with the PyQGIS of ${TEST_QGIS.name} writes the committed file`, async () => {
  const directory = await mkdtemp(join(tmpdir(), 'catalogue-'));
  try {
    const { command, args } = TEST_QGIS.python(GENERATOR, ['--output-dir', directory]);
    const run = spawnSync(command, args, {
      encoding: 'utf8',
      env: { ...process.env, QT_QPA_PLATFORM: 'offscreen', XDG_RUNTIME_DIR: tmpdir() },
    });
    assert.equal(run.status, 0, run.stderr);
    const written = run.stdout.trim().split('\n').at(-1) ?? '';
    const name = written.slice(written.lastIndexOf('/') + 1);
    const committed = await readFile(join(catalogueDir(), name), 'utf8');
    const fresh = await readFile(written, 'utf8');
    // A catalogue stands for its minor release: the root may hold a later point release than the
    // one that wrote the committed file, and any parameter it changed still shows below.
    assert.equal(minorRelease(fresh), minorRelease(committed));
    assert.equal(fresh.replace(QGIS_VERSION_LINE, committed.match(QGIS_VERSION_LINE)?.[0] ?? ''), committed);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});
