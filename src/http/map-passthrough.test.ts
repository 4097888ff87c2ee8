import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { mapTarget } from './map-passthrough.js';

describe('mapTarget', () => {
  it('reads the project, the layer and the schema of a map URL', () => {
    assert.deepEqual(mapTarget('/api/projects/world/layers/polygons/map'), {
      project: 'world',
      layer: 'polygons',
      schema: undefined,
    });
    assert.deepEqual(mapTarget('/api/projects/world/layers/polygons/map/'), {
      project: 'world',
      layer: 'polygons',
      schema: undefined,
    });
    assert.deepEqual(mapTarget('/api/projects/world/layers/polygons/map?schema=atlas'), {
      project: 'world',
      layer: 'polygons',
      schema: 'atlas',
    });
    assert.deepEqual(mapTarget('/api/projects/world/layers/polygons/map?'), {
      project: 'world',
      layer: 'polygons',
      schema: undefined,
    });
  });

  it('decodes percent-encoded names', () => {
    assert.deepEqual(mapTarget('/api/projects/caf%C3%A9/layers/a%20b%3Fc/map?schema=s%26t'), {
      project: 'café',
      layer: 'a b?c',
      schema: 's&t',
    });
  });

  it('leaves every other URL to the router', () => {
    for (const url of [
      '/api/projects/world/layers/polygons/map/url',
      '/api/projects/world/layers/polygons',
      '/api/projects/world/layers/polygons/map/extra',
      '/api/projects/world/layers//map',
      '/api/projects/world/layers/polygons/map?schema=a&schema=b',
      '/api/projects/world/layers/polygons/map?format=png',
      '/api/projects/world/layers/poly%E0gons/map',
      '/api/projects/world%/layers/polygons/map',
      '/API/projects/world/layers/polygons/map',
    ]) {
      assert.equal(mapTarget(url), undefined, url);
    }
  });
});
