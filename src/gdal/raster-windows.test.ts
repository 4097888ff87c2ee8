import assert from 'node:assert/strict';

import { describe, test } from '../../test/support/node-test.js';
import { planWindows, type Window } from './raster-windows.js';

function covered(windows: Window[]): number {
  return windows.reduce((sum, w) => sum + w.width * w.height, 0);
}

describe('read windows', () => {
  test('take whole rows of blocks when they fit, and cover every pixel once', () => {
    const windows = planWindows(1025, 2100, { x: 512, y: 512 }, 1 << 21);
    assert.deepEqual(windows, [
      { x: 0, y: 0, width: 1025, height: 1536 },
      { x: 0, y: 1536, width: 1025, height: 564 },
    ]);
  });

  test('split very wide rasters into runs of whole blocks', () => {
    const windows = planWindows(4700, 600, { x: 512, y: 512 }, 1 << 21);
    assert.deepEqual(
      windows.map((w) => [w.x, w.y, w.width, w.height]),
      [
        [0, 0, 4096, 512],
        [4096, 0, 604, 512],
        [0, 512, 4096, 88],
        [4096, 512, 604, 88],
      ],
    );
    assert.equal(covered(windows), 4700 * 600);
  });

  test('never cut a block, even when one block row exceeds the budget', () => {
    const windows = planWindows(100, 300, { x: 100, y: 1 }, 10);
    assert.equal(windows.length, 300);
    assert.ok(windows.every((w) => w.width === 100 && w.height === 1));
  });
});
