import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { isReservedPath } from './console.js';

describe('isReservedPath', () => {
  it('finds the reserved paths however they are disguised', () => {
    for (const url of [
      '/api',
      '/api/projects',
      '/api?x=1',
      '/metrics',
      '/docs/json',
      '/health/live',
      '/%61pi/projects',
      '/%61%70%69/projects',
      '/%2561pi/projects',
      '//api/projects',
      '/./api/projects',
      '/x/../api/projects',
      '/API/projects',
      '/Api/projects',
      '/%41PI/projects',
      '/\\api/projects',
      '/api;x/projects',
      '/api%00/projects',
      '/%6detrics',
      '/%2e/api/projects',
    ]) {
      assert.equal(isReservedPath(url), true, url);
    }
  });

  it("leaves the console's own pages to it", () => {
    for (const url of ['/', '/projects/roads', '/apis', '/instances/abc', '/projects/api', '/%zz', '/metricsx']) {
      assert.equal(isReservedPath(url), false, url);
    }
  });
});
