/** Project `town` made through the API from the demo data (`scripts/demo-data.py`), as tests start from it. */
import assert from 'node:assert/strict';
import { join } from 'node:path';

import { type Stack } from './stack.js';

/** Creates project `town` with the demo GeoPackage's `districts` as its layer. */
export async function createTownWithDistricts(stack: Stack, demo: string): Promise<void> {
  assert.equal((await stack.call('POST', '/api/projects', { name: 'town', author: 'Ada' })).status, 201);
  const districts = { datasource: `${join(demo, 'town.gpkg')}|layername=districts`, name: 'districts', type: 'vector' };
  assert.equal((await stack.call('POST', '/api/projects/town/layers', districts)).status, 201);
}

/** The styles of `town`'s layer `districts`, as the API lists them. */
export async function districtsStyles(stack: Stack): Promise<{ current_style: string; styles: string[] }> {
  return (await stack.call('GET', '/api/projects/town/layers/districts')).body as {
    current_style: string;
    styles: string[];
  };
}
