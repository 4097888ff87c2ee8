import assert from 'node:assert/strict';

import { describe, test } from '../../test/support/node-test.js';
import { BinEdges, type ValueRange } from './histogram-bins.js';
import { scriptKernels, type WindowKernels } from './histogram-loops.js';
import { float32Kernels } from './histogram-simd.js';
import { pixelType } from './pixels.js';

const FLOAT32 = pixelType('Float32', 'test');
const NO_DATA = -9999;

/** Pixels that reach every rule: no-data, NaN, zeros of both signs, infinities, whole numbers on bin edges. */
const SPECIAL = [NO_DATA, Number.NaN, 0, -0, Infinity, -Infinity, 3, -12, 40, 0.5, 3.4e38, 1e-45];

/** Windows of `sizes` pixels of noise around zero, every third a special value. */
function windows(sizes: number[], seed: number): Float32Array[] {
  let state = seed;
  return sizes.map((n) =>
    Float32Array.from({ length: n }, (_, i) => {
      state = (state * 1103515245 + 12345) % 2147483648;
      const special = SPECIAL[(i * 7 + state) % SPECIAL.length] as number;
      return state % 3 === 0 ? special : (state / 2147483648 - 0.5) * 100;
    }),
  );
}

/** Each window read into the kernels' buffers in turn, as forEachWindow does, and added. */
function run<T>(
  kernels: WindowKernels,
  pass: { add: (pixels: Float32Array, n: number) => void; result: () => T },
  data: Float32Array[],
): T {
  data.forEach((pixels, i) => {
    const buffer = kernels.buffers[i % 2] as Float32Array;
    buffer.set(pixels);
    pass.add(buffer, pixels.length);
  });
  return pass.result();
}

const same = (a: ValueRange | null, b: ValueRange | null): boolean =>
  a === null || b === null ? a === b : a.min === b.min && a.max === b.max;

// Window sizes: below one step, every tail length, and a smaller window after a larger one in the
// same buffer, whose stale pixels past its end must not count.
const CASES: Array<[string, number[]]> = [
  ['one pixel', [1]],
  ['three pixels', [3]],
  ['whole steps', [8, 4]],
  ['tails of 1, 2 and 3 pixels', [1001, 1002, 1003]],
  ['a shorter window after a longer one in each buffer', [1003, 1000, 999, 997, 5]],
];

describe('SIMD histogram kernels for Float32', () => {
  for (const [label, sizes] of CASES) {
    const largest = Math.max(...sizes);
    for (const noData of [NO_DATA, 0.5, Number.NaN]) {
      test(`${label}, no-data ${noData}: the same range and bins as the JavaScript loops`, () => {
        const data = windows(sizes, sizes.length * 31 + largest);
        const ranges: ValueRange[] = [
          { min: -50, max: 50 },
          { min: -12, max: 3 },
          { min: 0.25, max: 0.75 },
          { min: -3.4e38, max: 3.4e38 },
        ];
        for (const count of [1, 7, 100, 1000]) {
          const simd = float32Kernels(largest, count);
          const script = scriptKernels(FLOAT32, largest);
          const scanned = run(simd, simd.rangeScan(noData), data);
          const expected = run(script, script.rangeScan(noData), data);
          assert.ok(same(scanned, expected), `${JSON.stringify(scanned)} vs ${JSON.stringify(expected)}`);
          for (const range of [
            ...ranges,
            ...(scanned && Number.isFinite(scanned.max - scanned.min) ? [scanned] : []),
          ]) {
            const bins = new BinEdges(range, count, true);
            const counts = run(simd, simd.binning(bins, noData), data);
            assert.deepEqual(
              counts,
              run(script, script.binning(bins, noData), data),
              `${count} bins over ${JSON.stringify(range)}`,
            );
          }
        }
      });
    }
  }

  test('pixels on and beside edges whose positions are not whole numbers: the bins of the JavaScript loops', () => {
    const bins = new BinEdges({ min: 0.1, max: 0.7 }, 6, true);
    const low = bins.edges[0] as number;
    // Rounded to Float32, the edges lie off the whole positions a pixel's guess is truncated from.
    assert.ok(bins.edges.some((edge, k) => (edge - low) * bins.norm !== k));
    const bits = new Int32Array(Float32Array.from(bins.edges).buffer);
    const data = [new Float32Array(Int32Array.from([...bits].flatMap((edge) => [edge - 1, edge, edge + 1])).buffer)];
    const simd = float32Kernels(data[0]?.length ?? 0, 6);
    const script = scriptKernels(FLOAT32, data[0]?.length ?? 0);
    assert.deepEqual(run(simd, simd.binning(bins, NO_DATA), data), run(script, script.binning(bins, NO_DATA), data));
  });

  test('a window without a valid pixel has no range', () => {
    const kernels = float32Kernels(6, 10);
    const data = [Float32Array.of(Number.NaN, NO_DATA, Number.NaN, NO_DATA, NO_DATA, Number.NaN)];
    assert.equal(run(kernels, kernels.rangeScan(NO_DATA), data), null);
  });

  test('the range and the counts of a window of known pixels', () => {
    const kernels = float32Kernels(7, 4);
    const data = [Float32Array.of(2, 0, 1, NO_DATA, 4, 3, 4)];
    assert.deepEqual(run(kernels, kernels.rangeScan(NO_DATA), data), { min: 0, max: 4 });
    // Bins [0, 1), [1, 2), [2, 3), [3, 4]: the maximum falls in the last.
    assert.deepEqual(
      run(kernels, kernels.binning(new BinEdges({ min: 0, max: 4 }, 4, true), NO_DATA), data),
      [1, 1, 1, 3],
    );
  });
});
