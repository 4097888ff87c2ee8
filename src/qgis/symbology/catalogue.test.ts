import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { NotFound } from '../../errors.js';
import { defaultCatalogueDirectory, loadSymbologyCatalogue, SYMBOLOGY_ENDPOINTS } from './catalogue.js';

const GENERATOR = join(defaultCatalogueDirectory(), '..', '..', '..', 'scripts', 'symbology-catalogue.py');

const FILL_KEYS = [
  'border_width_map_unit_scale',
  'color',
  'joinstyle',
  'offset',
  'offset_map_unit_scale',
  'offset_unit',
  'outline_color',
  'outline_style',
  'outline_width',
  'outline_width_unit',
  'style',
];

test('the 3.22 fill description has exactly the eleven keys of the API', async () => {
  const catalogue = await loadSymbologyCatalogue('3.22.16');
  assert.equal(catalogue.fellBack, false);
  assert.match(catalogue.qgisVersion, /^3\.22\./);
  const fill = catalogue.description('vector/polygon/single_symbol/fill');
  assert.deepEqual(Object.keys(fill).sort(), FILL_KEYS);
  assert.match(fill['color'] as string, /^\d+,\d+,\d+,\d+$/);
  assert.match(fill['outline_style'] as string, /^solid \(no, solid, dash, dot, dash dot, dash dot dot\)$/);
});

test('every endpoint has a description, enumerations list their default first', async () => {
  const catalogue = await loadSymbologyCatalogue('3.22');
  for (const endpoint of SYMBOLOGY_ENDPOINTS) {
    assert.ok(Object.keys(catalogue.description(endpoint)).length > 0, endpoint);
  }
  const line = catalogue.description('vector/line/single_symbol/line');
  assert.equal(line['line_style'], 'solid (no, solid, dash, dot, dash dot, dash dot dot)');
  assert.match(
    catalogue.description('vector/point/single_symbol/marker')['name'] as string,
    /^circle \(square, .*circle.*\)$/,
  );
  assert.deepEqual(catalogue.description('raster/multibandcolor')['red'], { band: 1, min: 0, max: 255 });
  assert.deepEqual(catalogue.description('raster/rendering'), {
    brightness: '0',
    contrast: '0',
    gamma: '1',
    saturation: '0',
  });
});

test('ramps are looked up by name and an unknown ramp is NotFound', async () => {
  const catalogue = await loadSymbologyCatalogue('3.22');
  assert.ok(catalogue.rampNames().includes('Spectral'));
  assert.equal(catalogue.ramp('Spectral')['rampType'], 'gradient');
  assert.throws(() => catalogue.ramp('NoSuchRamp'), NotFound);
  assert.throws(() => catalogue.ramp('constructor'), NotFound);
});

test('an unknown version falls back to the newest catalogue and says so', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'catalogue-'));
  try {
    const source = join(defaultCatalogueDirectory(), 'catalogue-3.22.json');
    await copyFile(source, join(directory, 'catalogue-3.10.json'));
    await copyFile(source, join(directory, 'catalogue-3.9.json'));
    const exact = await loadSymbologyCatalogue('3.9.1', directory);
    assert.equal(exact.fellBack, false);
    const fallback = await loadSymbologyCatalogue('3.40.2-Bratislava', directory);
    assert.equal(fallback.fellBack, true);
    assert.equal(fallback.requestedVersion, '3.40.2-Bratislava');
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});

test('the generator run again with this PyQGIS writes the committed file', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'catalogue-'));
  try {
    const run = spawnSync('/usr/bin/python3', [GENERATOR, '--output-dir', directory], {
      encoding: 'utf8',
      env: { ...process.env, QT_QPA_PLATFORM: 'offscreen', XDG_RUNTIME_DIR: tmpdir() },
    });
    assert.equal(run.status, 0, run.stderr);
    const written = run.stdout.trim().split('\n').at(-1) ?? '';
    const name = written.slice(written.lastIndexOf('/') + 1);
    const committed = await readFile(join(defaultCatalogueDirectory(), name), 'utf8');
    assert.equal(await readFile(written, 'utf8'), committed);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});
