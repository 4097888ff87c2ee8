import assert from 'node:assert/strict';

import { afterEach, describe, test } from '../../test/support/node-test.js';
import { workerEnvironment } from './gdal-child.js';

describe('worker process environment', () => {
  const previous = { ...process.env };
  afterEach(() => {
    for (const key of ['UV_THREADPOOL_SIZE', 'MALLOC_ARENA_MAX']) {
      if (previous[key] === undefined) delete process.env[key];
      else process.env[key] = previous[key];
    }
  });

  test('runs GDAL calls on one libuv thread even where the environment asks for more', () => {
    // The calculator's runner asks for a write and the next read into the same buffers at once.
    process.env['UV_THREADPOOL_SIZE'] = '8';
    assert.equal(workerEnvironment()['UV_THREADPOOL_SIZE'], '1');
  });

  test('bounds malloc arenas unless the environment says otherwise', () => {
    delete process.env['MALLOC_ARENA_MAX'];
    assert.equal(workerEnvironment()['MALLOC_ARENA_MAX'], '1');
    process.env['MALLOC_ARENA_MAX'] = '4';
    assert.equal(workerEnvironment()['MALLOC_ARENA_MAX'], '4');
  });
});
