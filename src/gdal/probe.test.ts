import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { wgs84Extent } from './probe.js';

/** Each bound within a millionth of a degree of the expected one. */
function assertNear(actual: readonly number[], expected: readonly number[]): void {
  actual.forEach((value, index) =>
    assert.ok(Math.abs(value - (expected[index] ?? Number.NaN)) < 1e-6, `${actual.join(' ')} != ${expected.join(' ')}`),
  );
}

describe('wgs84Extent', () => {
  it('answers longitude first from an easting-first CRS', () => {
    // Web Mercator's square around (2°E, 45°N) to (3°E, 46°N).
    const extent = wgs84Extent([222638.9816, 5621521.4862, 333958.4724, 5780349.2206], {
      authid: 'EPSG:3857',
    });
    assertNear(extent, [2, 45, 3, 46]);
  });

  it('answers longitude first from a CRS EPSG gives northing first', () => {
    // ETRS89-extended / LAEA Europe (EPSG:3035, northing first in EPSG's order) at its origin, 10°E 52°N.
    const extent = wgs84Extent([4321000, 3210000, 4321000, 3210000], { authid: 'EPSG:3035' });
    assertNear(extent, [10, 52, 10, 52]);
  });

  it('leaves WGS 84 as it is', () => {
    assert.deepEqual(wgs84Extent([1, 2, 3, 4], { authid: 'EPSG:4326' }), [1, 2, 3, 4]);
  });
});
