import assert from 'node:assert/strict';

import { describe, test } from '../../../test/support/node-test.js';
import { FLOAT32 } from '../pixels.js';
import { levelSizes, OverviewPyramid } from './pyramid.js';
import { createSlots } from './slot-memory.js';

const ND = -3.4028234663852886e38;
const LEVELS = 5;

/** Pixels with every case of a block: no-data, zeros of both signs, extremes, subnormals and plain values. */
function window(width: number, height: number, seed: number): Float32Array {
  const special = [ND, ND, -0, 0, 3.4e38, -3.4e38, 1e-45, -1e-45, 1, -7.25];
  let state = seed;
  return Float32Array.from({ length: width * height }, (_, i) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    // Eight rows of no-data now and then, so that blocks of the first three levels have no valid pixel.
    if (Math.floor(i / width / 8) % 5 === 2) return ND;
    return state % 4 === 0 ? (special[state % special.length] as number) : (state / 2147483648 - 0.5) * 1000;
  });
}

interface Level {
  width: number;
  height: number;
  sums: number[];
  counts: number[];
}

const add = (a: number, b: number): number => a + b;

/**
 * The levels by their definition, block by block: a full-resolution block sums its pixels row by
 * row, or its valid ones from +0 when it has fewer than four; a coarser one adds the sums of each of
 * its rows, then the rows'. A block of no valid pixel is no-data.
 */
function expectedLevels(pixels: Float32Array, width: number, height: number): Float32Array[] {
  const result: Float32Array[] = [];
  let finer: Level = { width, height, sums: [...pixels], counts: [] };
  for (let l = 0; l < LEVELS; l++) {
    const level: Level = {
      width: Math.ceil(finer.width / 2),
      height: Math.ceil(finer.height / 2),
      sums: [],
      counts: [],
    };
    for (let y = 0; y < level.height; y++) {
      for (let x = 0; x < level.width; x++) {
        const rows = [2 * y, 2 * y + 1].filter((r) => r < finer.height);
        const cols = [2 * x, 2 * x + 1].filter((c) => c < finer.width);
        const at = (values: number[], r: number, c: number): number => values[r * finer.width + c] as number;
        if (l === 0) {
          const block = rows.flatMap((r) => cols.map((c) => at(finer.sums, r, c)));
          const valid = block.filter((v) => v !== ND);
          level.sums.push(valid.length === 4 ? valid.reduce(add) : valid.reduce(add, 0));
          level.counts.push(valid.length);
        } else {
          const rowTotals = (values: number[]) => rows.map((r) => cols.map((c) => at(values, r, c)).reduce(add));
          level.sums.push(rowTotals(finer.sums).reduce(add));
          level.counts.push(rowTotals(finer.counts).reduce(add));
        }
      }
    }
    result.push(
      Float32Array.from(level.sums, (sum, i) =>
        (level.counts[i] as number) > 0 ? sum / (level.counts[i] as number) : ND,
      ),
    );
    finer = level;
  }
  return result;
}

/** The pyramid's levels of a window in a slot of `capacity` pixels, whose pixels past the window are NaN. */
function reduced(pixels: Float32Array, width: number, height: number, capacity: number): Float32Array[] {
  const sizes = levelSizes(width, height, LEVELS);
  const slots = createSlots(1, [FLOAT32], capacity, sizes);
  const slot = slots[0];
  assert.ok(slot);
  slot.output.fill(Number.NaN);
  slot.output.set(pixels);
  const pyramid = new OverviewPyramid(ND);
  pyramid.reduce(slot.output, width, height, slot.levels, slot.overviews);
  return sizes.map(({ width: w, height: h }, i) => (slot.overviews[i] as Float32Array).slice(0, w * h));
}

describe('overview pyramid', () => {
  // Widths even and odd, wide and narrow; heights even and odd; one pixel.
  for (const [width, height] of [
    [64, 32],
    [70, 34],
    [203, 37],
    [1030, 6],
    [9, 5],
    [16, 3],
    [1, 1],
  ] as const) {
    test(`a ${width} x ${height} window's levels are the means of their blocks' valid pixels, bit for bit`, () => {
      const pixels = window(width, height, width * 31 + height);
      const actual = reduced(pixels, width, height, width * height + 100);
      const expected = expectedLevels(pixels, width, height);
      expected.forEach((level, l) => {
        const mismatches = [...level].flatMap((value, i) =>
          Object.is(value, actual[l]?.[i]) ? [] : [[i, value, actual[l]?.[i]]],
        );
        assert.deepEqual(mismatches.slice(0, 5), [], `level ${l + 1}`);
        assert.equal(actual[l]?.length, level.length);
      });
      if (height >= 24) {
        const third = expected[2] as Float32Array;
        assert.ok(third.some((v) => v === ND) && third.some((v) => v !== ND));
      }
    });
  }
});
