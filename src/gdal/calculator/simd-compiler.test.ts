import assert from 'node:assert/strict';

import { describe, test } from '../../../test/support/node-test.js';
import { pixelType } from '../pixels.js';
import { compileExpression, type KernelInput } from './compiler.js';
import { parseExpression } from './parser.js';
import { compileSimdKernel } from './simd-compiler.js';
import { createSlots } from './slot-memory.js';

const ND = -3.4028234663852886e38;
const FLOAT32 = pixelType('Float32', 'test');
const INPUTS: KernelInput[] = [
  { key: 'a@1', storage: 'float32', noData: -9999 },
  { key: 'b@1', storage: 'float32', noData: null },
];

/** Pixels that reach every rule: no-data, NaN, zeros of both signs, infinities, the Float32 extremes, overflow. */
const SPECIAL = [0, -0, 1, -1, 0.5, -9999, Number.NaN, Infinity, -Infinity, 3.4e38, -3.4e38, 1e-45, 7, 1e20, -2.5];

function pixels(n: number, seed: number): number[] {
  let state = seed;
  return Array.from({ length: n }, (_, i) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    const special = SPECIAL[(i * 7 + seed) % SPECIAL.length] as number;
    return state % 3 === 0 ? special : (state / 2147483648 - 0.3) * 10 ** ((state % 9) - 3);
  });
}

/** The SIMD kernel's output and the JavaScript kernel's, on the same pixels, bit for bit. */
function bothKernels(expression: string, n: number): { simd: Float32Array; js: Float32Array } {
  const tree = parseExpression(expression);
  const { memory, slots } = createSlots(1, [FLOAT32, FLOAT32], n, []);
  const slot = slots[0];
  assert.ok(slot);
  const values = [pixels(n, 1), pixels(n, 2)];
  slot.inputs.forEach((array, i) => array.set(values[i] as number[]));
  const jsInputs = values.map((v) => Float32Array.from(v));
  const js = new Float32Array(n);
  compileExpression(tree, INPUTS, ND)(n, js, jsInputs);
  const simd = compileSimdKernel(tree, INPUTS, ND, memory);
  assert.ok(simd, `${expression} has a SIMD kernel`);
  simd(n, slot.output, slot.inputs);
  return { simd: slot.output.slice(0, n), js };
}

describe('SIMD raster calculator kernels', () => {
  for (const expression of [
    '(a@1 - b@1) / (a@1 + b@1)',
    '- a@1 * 3.5 + b@1 / 7 - 1e30',
    'a@1 < b@1 + (a@1 > 0) * 2 + (a@1 <= b@1) * 4 + (a@1 >= 1) * 8 + (a@1 = b@1) * 16 + (a@1 != 0) * 32',
    '(a@1 AND b@1) + (a@1 OR 0) * 2',
    'if(a@1 > b@1, sqrt(a@1), abs(b@1)) + min(a@1, b@1) - max(a@1, -0)',
    'b@1',
  ]) {
    test(`${expression} equals the JavaScript kernel bit for bit`, () => {
      // 1003 pixels: the last step computes past the window's end, which must not show in it.
      const { simd, js } = bothKernels(expression, 1003);
      const differences = Array.from(js).filter((value, i) => !Object.is(value, simd[i]));
      assert.equal(differences.length, 0);
      assert.ok(js.some((value) => value === ND) && js.some((value) => value !== ND));
    });
  }

  test('leave powers, trigonometry, logarithms and other inputs than Float32 to the JavaScript kernel', () => {
    const { memory } = createSlots(1, [FLOAT32], 4, []);
    for (const expression of ['a@1 ^ 2', 'sin(a@1)', 'ln(a@1)'])
      assert.equal(compileSimdKernel(parseExpression(expression), INPUTS, ND, memory), undefined);
    const integer: KernelInput = { key: 'a@1', storage: 'integer', noData: null };
    assert.equal(compileSimdKernel(parseExpression('a@1 + 1'), [integer], ND, memory), undefined);
  });
});
