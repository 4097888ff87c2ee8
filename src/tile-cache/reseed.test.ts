import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { queuedJob } from '../jobs/record.js';
import { reseedRequests } from './reseed.js';

const seedJob = (params: Record<string, unknown>) =>
  queuedJob('seed', { name: 'p', schema: 'public' }, params, { pid: 1, host: 'h' }, false);

describe('which levels a restyled layer is seeded on again', () => {
  // Newest first, as the job store lists them.
  const seeds = [
    seedJob({ layers: ['roads'], min_zoom: 10, max_zoom: 12, extent: [1, 44, 2, 45], extent_crs: 'EPSG:4326' }),
    seedJob({ min_zoom: 0, max_zoom: 8, refresh: false }),
    seedJob({ layers: ['rivers'], min_zoom: 3, max_zoom: 4 }),
  ];

  it('takes each layer from its newest seed, all layers included, and groups layers of one coverage', () => {
    assert.deepEqual(reseedRequests(['roads', 'parcels', 'rivers'], seeds), [
      { layers: ['roads'], min_zoom: 10, max_zoom: 12, extent: [1, 44, 2, 45], extent_crs: 'EPSG:4326', refresh: true },
      { layers: ['parcels', 'rivers'], min_zoom: 0, max_zoom: 8, refresh: true },
    ]);
  });

  it('leaves out layers no seed covered', () => {
    assert.deepEqual(reseedRequests(['parcels'], seeds.slice(0, 1)), []);
    assert.deepEqual(reseedRequests(['roads'], []), []);
  });
});
