import assert from 'node:assert/strict';
import { join } from 'node:path';

import { BadRequest, Unprocessable } from '../src/errors.js';
import { configureGdalMemory } from '../src/gdal/gdal-memory.js';
import { computeHistogram } from '../src/gdal/histogram.js';
import { type HistogramOptions } from '../src/gdal/histogram-bins.js';
import { after, before, describe, test } from './support/node-test.js';
import { gdalHistogram, numpyHistogram } from './support/raster-oracle.js';
import { type RasterSpec, scratchFolder, seededRandom, writeRaster } from './support/rasters.js';

configureGdalMemory();

const random = seededRandom(7);
/** Float pixels: noise around a slope, every 17th a whole number (bins often start on one), some NaN. */
const floatValue = (x: number, y: number): number => {
  if ((x * 31 + y * 7) % 97 === 0) return -9999;
  if ((x + y * 13) % 101 === 0) return Number.NaN;
  const v = (x - y) * 0.05 + (random() - 0.5) * 40;
  return (x + y) % 17 === 0 ? Math.round(v) : v;
};

const RASTERS: Record<string, RasterSpec> = {
  byte: { type: 'Byte', width: 523, height: 317, noData: 0, tile: 256, value: () => Math.floor(random() * 256) },
  int16: {
    type: 'Int16',
    width: 401,
    height: 299,
    bands: 2,
    noData: -9999,
    value: (x, y, band) => ((x * y) % 53 === 0 ? -9999 : Math.floor(random() * 4000) - 2000 + band * 3),
  },
  uint16: {
    type: 'UInt16',
    width: 300,
    height: 200,
    noData: 65535,
    tile: 128,
    value: (x) => (x % 29 === 0 ? 65535 : Math.floor(random() * 60000)),
  },
  int32: { type: 'Int32', width: 257, height: 190, noData: -1, value: () => Math.floor(random() * 2e6) - 1e6 },
  float32: { type: 'Float32', width: 509, height: 311, noData: -9999, tile: 256, value: floatValue },
  float64: { type: 'Float64', width: 260, height: 180, value: () => random() * 1e-3 + 1e3 },
  constant: { type: 'Float32', width: 300, height: 100, noData: 5, value: (x) => (x < 10 ? 5 : 7.25) },
  empty: { type: 'Float32', width: 100, height: 80, noData: -1, value: () => -1 },
  /**
   * Float32 with its no-data value inside the bins, in a window of 851 pixels: the last three
   * hold the maximum, the minimum and NaN.
   */
  tail: {
    type: 'Float32',
    width: 37,
    height: 23,
    noData: 0.5,
    value: (x, y) => {
      const fromEnd = 37 * 23 - 1 - (y * 37 + x);
      if (fromEnd < 3) return [Number.NaN, -99, 99.5][fromEnd] as number;
      return (x * 7 + y * 3) % 11 === 0 ? 0.5 : (x - y) * 0.75;
    },
  },
  /** More pixels than one read window holds, so several windows add up. */
  large: { type: 'Float32', width: 2100, height: 2100, noData: -9999, tile: 256, value: floatValue },
};

const CASES: Record<string, Record<string, HistogramOptions>> = {
  byte: { default: {}, 'min only': { min: 40 }, 'min and max': { min: 10, max: 200, count: 19 } },
  int16: {
    default: {},
    'min only': { min: -100.5 },
    'min and max, edges on integers': { min: -2000, max: 2000, count: 400 },
  },
  uint16: { default: {}, 'min only': { min: 30000 }, 'min and max': { min: 0, max: 65535, count: 7 } },
  int32: { default: {}, 'min only': { min: 0 }, 'min and max': { min: -5e5, max: 5e5, count: 1000 } },
  float32: {
    default: {},
    'min only': { min: -3.3 },
    'min and max, edges on integers': { min: -50, max: 50, count: 100 },
  },
  float64: {
    default: {},
    'min only': { min: 1000.0005 },
    'min and max': { min: 1000.0001, max: 1000.0009, count: 33 },
  },
  constant: { default: {} },
  empty: { default: {} },
  tail: { default: {}, 'min and max, no-data inside': { min: -10, max: 10, count: 40 } },
  large: { default: {}, 'min and max': { min: -60, max: 60, count: 240 } },
};

function close(actual: number, expected: number): boolean {
  return Math.abs(actual - expected) <= 1e-6 * Math.max(1, Math.abs(expected));
}

describe('exact histograms', () => {
  let folder: Awaited<ReturnType<typeof scratchFolder>>;
  const paths: Record<string, string> = {};

  before(async () => {
    folder = await scratchFolder('steward-histogram-');
    for (const [name, spec] of Object.entries(RASTERS))
      paths[name] = writeRaster(join(folder.dir, `${name}.tif`), spec);
  });
  after(() => folder.remove());

  for (const [name, cases] of Object.entries(CASES)) {
    for (const [label, options] of Object.entries(cases)) {
      test(`${name}, ${label}: equals numpy.histogram of the valid pixels, bin for bin`, async () => {
        const path = paths[name] as string;
        const [ours, theirs] = await Promise.all([computeHistogram(path, options), numpyHistogram(path, options)]);
        assert.deepEqual(Object.keys(ours), Object.keys(theirs));
        for (const [band, expected] of Object.entries(theirs)) {
          const actual = ours[band];
          assert.ok(actual);
          assert.equal(actual.values.length, options.count ?? 1000);
          assert.deepEqual(actual.values, expected.values, `band ${band}`);
          assert.ok(
            close(actual.min, expected.min) && close(actual.max, expected.max),
            `${actual.min}..${actual.max} vs ${expected.min}..${expected.max}`,
          );
        }
      });
    }
  }

  test('the default range counts every valid pixel once', async () => {
    const spec = RASTERS['float32'] as RasterSpec;
    const histogram = await computeHistogram(paths['float32'] as string);
    let valid = 0;
    for (let y = 0; y < spec.height; y++) {
      for (let x = 0; x < spec.width; x++) if ((x * 31 + y * 7) % 97 !== 0 && (x + y * 13) % 101 !== 0) valid++;
    }
    assert.equal(
      histogram['1']?.values.reduce((sum, n) => sum + n, 0),
      valid,
    );
  });

  // GDAL leaves values equal to max out where numpy counts them in the last bin: with a max above
  // every value, and power-of-two bin widths so both compute the same bin for a pixel on an edge,
  // the two agree.
  const GDAL_CASES: Array<[string, number, number, number]> = [
    ['byte', 0, 512, 128],
    ['int16', -4096, 4096, 512],
    ['uint16', 0, 65536, 1024],
    ['float32', -64, 64, 128],
  ];
  for (const [name, min, max, count] of GDAL_CASES) {
    test(`${name}: equals GDAL's histogram over [${min}, ${max}) in ${count} bins`, async () => {
      const path = paths[name] as string;
      const [ours, theirs] = await Promise.all([
        computeHistogram(path, { min, max, count }),
        gdalHistogram(path, min, max, count),
      ]);
      for (const [band, values] of Object.entries(theirs)) assert.deepEqual(ours[band]?.values, values, `band ${band}`);
    });
  }

  test('refuses a range whose min exceeds its max, and a min above every valid value', async () => {
    await assert.rejects(computeHistogram(paths['byte'] as string, { min: 9, max: 3 }), BadRequest);
    await assert.rejects(
      computeHistogram(paths['byte'] as string, { min: 1000 }),
      (error: Error) => error instanceof BadRequest && /largest valid value/.test(error.message),
    );
  });

  test('answers 422 for a datasource GDAL cannot open', async () => {
    await assert.rejects(computeHistogram(join(folder.dir, 'missing.tif')), Unprocessable);
  });
});
