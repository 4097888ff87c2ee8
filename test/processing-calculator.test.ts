import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, readdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

import gdal from 'gdal-async';

import { BadRequest, Unprocessable } from '../src/errors.js';
import { calculateRaster } from '../src/gdal/calculator/calculate.js';
import { OUTPUT_NO_DATA } from '../src/gdal/calculator/output.js';
import { parseExpression } from '../src/gdal/calculator/parser.js';
import { configureGdalMemory } from '../src/gdal/gdal-memory.js';
import { after, before, describe, test } from './support/node-test.js';
import { askOracle, type CalcComparison, gdalCalc, type OverviewComparison } from './support/raster-oracle.js';
import { scratchFolder, seededRandom, writeRaster } from './support/rasters.js';

configureGdalMemory();
const run = promisify(execFile);

// 1025 x 2100 pixels: an odd width, and more rows than one window of the calculator holds.
const GRID = { width: 1025, height: 2100, geoTransform: [500000, 10, 0, 4000000, 0, -10] };
const random = seededRandom(11);
const bValues = new Int16Array(GRID.width * GRID.height).map(() => Math.floor(random() * 201) - 100);

/** a: Float32 with no-data, NaN, and pixels equal to -b so that a + b is 0 there. */
function aValue(x: number, y: number): number {
  const i = y * GRID.width + x;
  if (i % 89 === 0) return -9999;
  if (i % 211 === 0) return Number.NaN;
  if (i % 23 === 0) return -(bValues[i] as number);
  return (random() - 0.5) * 200;
}

/** Our expression, the same in numpy over float64 arrays a, b, c (band 2 of c), and the layers it uses. */
const EXPRESSIONS: Array<[string, string, string[]]> = [
  ['("a@1" - "b@1") / ("a@1" + "b@1")', '(a - b) / (a + b)', ['a', 'b']],
  ['a@1 * 2.5 + b@1 ^ 2 - 7', 'a * 2.5 + b ** 2 - 7', ['a', 'b']],
  ['- a@1 ^ 3 + 2 ^ 3 ^ 2', '(-a) ** 3 + (2 ** 3) ** 2', ['a']],
  ['abs(a@1 - b@1) / 3 - - b@1', 'abs(a - b) / 3 + b', ['a', 'b']],
  ['sqrt(a@1) + ln(b@1) - log10(abs(a@1) + 1)', 'sqrt(a) + log(b) - log10(abs(a) + 1)', ['a', 'b']],
  ['sin(a@1) * cos(b@1) + tan(a@1 / 100)', 'sin(a) * cos(b) + tan(a / 100)', ['a', 'b']],
  ['asin(a@1 / 100) + acos(b@1 / 100) * atan(a@1)', 'arcsin(a / 100) + arccos(b / 100) * arctan(a)', ['a', 'b']],
  ['min(a@1, b@1) - max(a@1, 0) * "c@2"', 'minimum(a, b) - maximum(a, 0) * c', ['a', 'b', 'c']],
  [
    '(a@1 > b@1) + (a@1 < 0) * 2 + (a@1 >= b@1) * 4 + (a@1 <= 10) * 8 + (round@1 = b@1) * 16 + (b@1 != 0) * 32',
    '(a > b) * 1 + (a < 0) * 2 + (a >= b) * 4 + (a <= 10) * 8 + (rint(a) == b) * 16 + (b != 0) * 32',
    ['a', 'b', 'round'],
  ],
  ['a@1 > 0 AND b@1 > 0 OR a@1 < -50', 'logical_and(a > 0, logical_or(b > 0, a < -50)) * 1.0', ['a', 'b']],
  ['if(a@1 > b@1, a@1, b@1 * 2)', 'where(a > b, a, b * 2)', ['a', 'b']],
  ['b@1 / (a@1 - a@1)', 'b / (a - a)', ['a', 'b']],
  ['a@1 * 1e37', 'a * 1e37', ['a']],
];

const LETTERS: Record<string, string> = { a: 'A', b: 'B', c: 'C', round: 'D' };

function numpyCalc(expression: string, layers: string[]): string {
  const names = layers.map((layer) => (layer === 'round' ? 'rint_a' : layer));
  const args = layers.map((layer) => `${LETTERS[layer]}.astype(float64)`);
  const body = layers.includes('round') ? expression.replace('rint(a)', 'rint_a') : expression;
  return `(lambda ${names.join(', ')}: ${body})(${args.join(', ')})`;
}

describe('raster calculator', () => {
  let folder: Awaited<ReturnType<typeof scratchFolder>>;
  const sources = new Map<string, string>();
  const path = (name: string): string => join(folder.dir, name);

  before(async () => {
    folder = await scratchFolder('steward-calc-');
    const grid = { ...GRID, epsg: 32631 };
    sources.set('a', writeRaster(path('a.tif'), { ...grid, type: 'Float32', noData: -9999, tile: 256, value: aValue }));
    sources.set(
      'b',
      writeRaster(path('b.tif'), {
        ...grid,
        type: 'Int16',
        noData: -32768,
        value: (x, y) => bValues[y * GRID.width + x] as number,
      }),
    );
    sources.set(
      'c',
      writeRaster(path('c.tif'), {
        ...grid,
        type: 'UInt16',
        bands: 2,
        tile: 512,
        value: (x, y, band) => (x * band + y) % 1000,
      }),
    );
    // rint(a) as a raster of its own, so "=" meets equal values often.
    sources.set(
      'round',
      writeRaster(path('round.tif'), { ...grid, type: 'Float32', value: (x, y) => ((x + y) % 201) - 100 }),
    );
    sources.set(
      'd',
      writeRaster(path('d.tif'), {
        type: 'Float32',
        width: 300,
        height: 500,
        noData: -1,
        epsg: 4326,
        geoTransform: [2.995, 0.0004, 0, 36.15, 0, -0.0004],
        value: (x, y) => (x % 50 === 0 ? -1 : x + y / 10),
      }),
    );
    // Wider than one window, so windows split the rows too.
    sources.set(
      'wide',
      writeRaster(path('wide.tif'), {
        type: 'Float32',
        width: 9000,
        height: 600,
        noData: 0,
        epsg: 32631,
        value: (x, y) => ((x * 7 + y) % 13 === 0 ? 0 : Math.sin(x / 50) * 100 + y),
      }),
    );
  });
  after(() => folder.remove());

  async function compareWithGdalCalc(
    ours: string,
    numpy: string,
    layers: string[],
    inputPaths: Record<string, string>,
  ): Promise<CalcComparison> {
    const theirs = `${ours}.gdal_calc.tif`;
    const inputs = Object.fromEntries(
      layers.map((layer) => [
        LETTERS[layer] as string,
        { path: inputPaths[layer] as string, band: layer === 'c' ? 2 : 1 },
      ]),
    );
    await gdalCalc(numpyCalc(numpy, layers), inputs, theirs, OUTPUT_NO_DATA);
    return askOracle<CalcComparison>({
      command: 'compare-calc',
      ours,
      theirs,
      nodata: OUTPUT_NO_DATA,
      inputs: Object.values(inputs),
    });
  }

  EXPRESSIONS.forEach(([expression, numpy, layers], index) => {
    test(`${expression} equals gdal_calc.py`, async () => {
      const output = path(`out-${index}.tif`);
      await calculateRaster(parseExpression(expression), sources, output);
      const result = await compareWithGdalCalc(output, numpy, layers, Object.fromEntries(sources));
      assert.ok(result.shape_equal);
      assert.equal(result.nodata_mismatches, 0, JSON.stringify(result));
      assert.ok(result.max_diff <= 1e-6 * Math.max(result.span, 1e-30), JSON.stringify(result));
    });
  });

  test('covers no-data and division by zero in the comparisons above', async () => {
    const result = await compareWithGdalCalc(
      path('out-0.tif'),
      EXPRESSIONS[0]?.[1] as string,
      ['a', 'b'],
      Object.fromEntries(sources),
    );
    const inputNoData = Math.ceil((GRID.width * GRID.height) / 89) + Math.ceil((GRID.width * GRID.height) / 211);
    assert.ok(result.nodata > inputNoData + (GRID.width * GRID.height) / 23 / 2, JSON.stringify(result));
    assert.ok(result.valid > (GRID.width * GRID.height) / 2);
  });

  test('resamples an input on another grid and CRS onto the first input grid (nearest neighbour)', async () => {
    const output = path('resampled.tif');
    await calculateRaster(parseExpression('a@1 + d@1 * 2'), sources, output);
    const warped = path('d-on-a.tif');
    const [x0, , , y0] = GRID.geoTransform as [number, number, number, number];
    await run('gdalwarp', [
      '-q',
      '-overwrite',
      '-t_srs',
      'EPSG:32631',
      '-te',
      String(x0),
      String(y0 - 10 * GRID.height),
      String(x0 + 10 * GRID.width),
      String(y0),
      '-ts',
      String(GRID.width),
      String(GRID.height),
      '-r',
      'near',
      '-et',
      '0',
      '-ot',
      'Float64',
      '-dstnodata',
      'nan',
      sources.get('d') as string,
      warped,
    ]);
    const result = await compareWithGdalCalc(output, 'a + b * 2', ['a', 'b'], {
      a: sources.get('a') as string,
      b: warped,
    });
    assert.equal(result.nodata_mismatches, 0, JSON.stringify(result));
    assert.ok(result.valid > 10000, 'the rasters overlap');
    assert.ok(result.max_diff <= 1e-6 * result.span, JSON.stringify(result));
  });

  test('writes a tiled, uncompressed Float32 GeoTIFF with no-data and overviews that average the valid pixels', async () => {
    for (const [expression, name] of [
      ['a@1 * 2', 'props-a.tif'],
      ['wide@1 - 1', 'props-wide.tif'],
    ] as const) {
      const output = path(name);
      await calculateRaster(parseExpression(expression), sources, output);
      const dataset = gdal.open(output);
      const band = dataset.bands.get(1);
      assert.equal(band.dataType, 'Float32');
      assert.equal(band.noDataValue, OUTPUT_NO_DATA);
      assert.deepEqual(band.blockSize, { x: 256, y: 256 });
      assert.equal((dataset.getMetadata('IMAGE_STRUCTURE') as Record<string, string>)['COMPRESSION'], undefined);
      assert.deepEqual(
        band.overviews.map((overview) => overview.size.x),
        name === 'props-a.tif' ? [513, 257, 129, 65] : [4500, 2250, 1125, 563, 282, 141],
      );
      dataset.close();
      const overview = await askOracle<OverviewComparison>({ command: 'overview-check', path: output });
      assert.deepEqual(overview.shape, overview.expected_shape);
      assert.equal(overview.nodata_mismatches, 0);
      assert.ok(overview.max_diff < 1e-3, JSON.stringify(overview));
    }
  });

  test('refuses unknown layers, missing bands and expressions without bands, naming them', async () => {
    const out = path('never.tif');
    await assert.rejects(
      calculateRaster(parseExpression('a@1 + nope@1'), sources, out),
      (e: Error) => e instanceof BadRequest && /character 7/.test(e.message) && /"nope"/.test(e.message),
    );
    await assert.rejects(
      calculateRaster(parseExpression('c@3'), sources, out),
      (e: Error) => e instanceof BadRequest && /has 2 bands, there is no band 3/.test(e.message),
    );
    await assert.rejects(calculateRaster(parseExpression('1 + 2'), sources, out), BadRequest);
    await assert.rejects(stat(out));
  });

  test('refuses outputs it cannot write, before computing anything', async () => {
    const tree = parseExpression('a@1');
    await assert.rejects(calculateRaster(tree, sources, 'relative/out.tif'), BadRequest);
    await assert.rejects(calculateRaster(tree, sources, path('out.png')), BadRequest);
    await assert.rejects(calculateRaster(tree, sources, '/vsimem/out.tif'), BadRequest);
    await assert.rejects(
      calculateRaster(tree, sources, path('missing-folder/out.tif')),
      (e: Error) => e instanceof Unprocessable && /does not exist/.test(e.message),
    );
    await assert.rejects(calculateRaster(tree, sources, '/proc/out.tif'), Unprocessable);
  });

  test('replaces a previous output and drops the side files that described it', async () => {
    const output = path('replaced.tif');
    await calculateRaster(parseExpression('a@1'), sources, output);
    await writeFile(
      `${output}.aux.xml`,
      '<PAMDataset><Metadata><MDI key="STATISTICS_MAXIMUM">1</MDI></Metadata></PAMDataset>',
    );
    await writeFile(`${output}.ovr`, 'old overviews');
    await calculateRaster(parseExpression('a@1 * 2'), sources, output, undefined, { overwrite: true });
    await assert.rejects(stat(`${output}.aux.xml`));
    await assert.rejects(stat(`${output}.ovr`));
    assert.ok((await readdir(folder.dir)).every((name) => !name.startsWith('.replaced.tif.')));
  });

  test('leaves an existing output untouched and no temporary file when a run fails midway', async () => {
    const broken = path('broken.tif');
    await copyFile(sources.get('a') as string, broken);
    await truncate(broken, Math.floor((await stat(broken)).size * 0.6));
    const output = path('kept.tif');
    await writeFile(output, 'previous result');
    const before = await readdir(folder.dir);
    await assert.rejects(
      calculateRaster(parseExpression('broken@1 * 2'), new Map([['broken', broken]]), output, undefined, {
        overwrite: true,
      }),
    );
    assert.equal(await readFile(output, 'utf8'), 'previous result');
    assert.deepEqual((await readdir(folder.dir)).sort(), before.sort());
  });
});
