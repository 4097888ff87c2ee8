import assert from 'node:assert/strict';

import { describe, test } from '../../../test/support/node-test.js';
import type { PixelArray } from '../pixels.js';
import { compileExpression, type KernelInput } from './compiler.js';
import { parseExpression } from './parser.js';

const ND = -3.4028234663852886e38;

function evaluate(expression: string, inputs: Array<KernelInput & { pixels: PixelArray }>): number[] {
  const kernel = compileExpression(parseExpression(expression), inputs, ND);
  const n = inputs[0]?.pixels.length ?? 1;
  const out = new Float32Array(n);
  kernel(
    n,
    out,
    inputs.map((input) => input.pixels),
  );
  return Array.from(out);
}

const float = (key: string, values: number[], noData: number | null = null) => ({
  key,
  storage: 'float32' as const,
  noData,
  pixels: Float32Array.from(values),
});

describe('raster calculator kernels', () => {
  test('evaluate arithmetic, functions and constants in Float32', () => {
    const a = float('a@1', [1, 4, 9]);
    assert.deepEqual(evaluate('sqrt(a@1) * 2 + 0.5', [a]), [2.5, 4.5, 6.5]);
    assert.deepEqual(evaluate('min(a@1, 5) - max(a@1, 5) + abs(- a@1)', [a]), [-3, 3, 5]);
    assert.deepEqual(evaluate('- a@1 ^ 2', [a]), [1, 16, 81]);
    assert.deepEqual(evaluate('log10(b@1) + ln(b@1 / b@1)', [float('b@1', [1, 10, 100])]), [0, 1, 2]);
  });

  test('comparisons, AND, OR and if give 1 or 0', () => {
    const a = float('a@1', [-1, 0, 2]);
    const b = float('b@1', [0, 0, 1]);
    assert.deepEqual(evaluate('a@1 < b@1', [a, b]), [1, 0, 0]);
    assert.deepEqual(evaluate('a@1 >= b@1', [a, b]), [0, 1, 1]);
    assert.deepEqual(evaluate('a@1 = b@1', [a, b]), [0, 1, 0]);
    assert.deepEqual(evaluate('a@1 != b@1', [a, b]), [1, 0, 1]);
    assert.deepEqual(evaluate('a@1 AND b@1', [a, b]), [0, 0, 1]);
    assert.deepEqual(evaluate('a@1 OR b@1', [a, b]), [1, 0, 1]);
    assert.deepEqual(evaluate('if(a@1 > 0, 10, b@1 - 1)', [a, b]), [-1, -1, 10]);
  });

  test('write no-data where an input is no-data or NaN, whatever the expression', () => {
    const a = float('a@1', [1, -9999, Number.NaN, 3], -9999);
    const b = float('b@2', [2, 2, 2, 2]);
    for (const expression of ['a@1 + b@2', 'a@1 > 0', 'a@1 ^ 0', 'if(1, b@2, a@1)']) {
      const out = evaluate(expression, [a, b]);
      assert.equal(out[1], ND, expression);
      assert.equal(out[2], ND, expression);
      assert.notEqual(out[3], ND, expression);
    }
  });

  test('write no-data where the result is not a finite Float32', () => {
    const a = float('a@1', [1, 0, -1, 3e38]);
    assert.deepEqual(evaluate('1 / a@1', [a]), [1, ND, -1, Math.fround(1 / 3e38)]);
    assert.deepEqual(evaluate('a@1 / 0', [a]), [ND, ND, ND, ND]);
    assert.deepEqual(evaluate('sqrt(a@1)', [a]).slice(0, 3), [1, 0, ND]);
    assert.equal(evaluate('a@1 * 10', [a])[3], ND);
  });

  test('write no-data exactly where the result rounds to an infinite Float32', () => {
    const maxFloat = 3.4028234663852886e38;
    const limit = 2 ** 128 - 2 ** 103;
    // Just below the limit rounds down to FLT_MAX; the limit itself is a tie that rounds to Infinity.
    const belowLimit = limit - 2 ** 75;
    const a = {
      key: 'a@1',
      storage: 'float64' as const,
      noData: null,
      pixels: Float64Array.from([belowLimit, limit, -belowLimit, -limit]),
    };
    assert.deepEqual(evaluate('a@1', [a]), [maxFloat, ND, -maxFloat, ND]);
    assert.deepEqual(
      [belowLimit, limit].map((value) => Math.fround(value)),
      [maxFloat, Number.POSITIVE_INFINITY],
    );
  });

  test('write into an input array, each pixel after reading it from every input', () => {
    const kernel = compileExpression(
      parseExpression('b@1 - a@1 * 2'),
      [float('a@1', [], -9999), float('b@1', [], -9999)],
      ND,
    );
    for (const shared of [0, 1]) {
      const inputs = [Float32Array.from([1, -9999, 3, 4]), Float32Array.from([10, 20, -9999, 40])];
      const out = inputs[shared] as Float32Array;
      kernel(4, out, inputs);
      assert.deepEqual(Array.from(out), [8, ND, ND, 32]);
    }
  });

  test('compare integer pixels with an integer no-data value only', () => {
    const counts = { key: 'c@1', storage: 'integer' as const, noData: 7, pixels: Int16Array.from([7, 8]) };
    assert.deepEqual(evaluate('c@1 * 2', [counts]), [ND, 16]);
    const odd = { key: 'c@1', storage: 'integer' as const, noData: 7.5, pixels: Uint8Array.from([7, 8]) };
    assert.deepEqual(evaluate('c@1 * 2', [odd]), [14, 16]);
  });

  test('match a Float32 no-data value written as a double', () => {
    const a = float('a@1', [ND, 1], ND);
    assert.deepEqual(evaluate('a@1 + 1', [a]), [ND, 2]);
  });
});
