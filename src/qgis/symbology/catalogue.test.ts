import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { test } from '../../../test/support/node-test.js';
import { catalogueDir } from '../../checkout.js';
import { NotFound } from '../../errors.js';
import { loadSymbologyCatalogue, SYMBOLOGY_ENDPOINTS, SymbologyCatalogues } from './catalogue.js';

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

test('a version takes its own catalogue, else the nearest one below, and says which', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'catalogue-'));
  try {
    const source = join(catalogueDir(), 'catalogue-3.22.json');
    for (const version of ['3.9', '3.10', '3.40']) await copyFile(source, join(directory, `catalogue-${version}.json`));
    const catalogues = await SymbologyCatalogues.load(directory);
    const picked = (version: string | undefined) => {
      const { catalogueVersion, match } = catalogues.select(version);
      return `${catalogueVersion} ${match}`;
    };
    assert.equal(picked('3.9.1'), '3.9 exact');
    assert.equal(picked('3.40.6-Bratislava'), '3.40 exact');
    assert.equal(picked('3.22.16'), '3.10 nearest below');
    assert.equal(picked('3.44.15-Solothurn'), '3.40 nearest below');
    assert.equal(picked('4.0.0'), '3.40 nearest below');
    assert.equal(picked('3.4.2'), '3.9 oldest');
    assert.equal(picked(undefined), '3.40 newest');
    assert.equal(picked('unknown'), '3.40 newest');
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});
