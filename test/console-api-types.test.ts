/** The web console's API types are those the running API describes: the console cannot drift. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';

import { API_TYPES_FILE, generateApiTypes } from '../scripts/api-types.js';
import { test } from './support/node-test.js';

test('web/src/api/schema.d.ts is generated from the current /api/openapi.json', async () => {
  const committed = await readFile(API_TYPES_FILE, 'utf8');
  assert.ok(
    committed === (await generateApiTypes()),
    'the API changed: run `npm run api-types` and adapt the console to the new types',
  );
});
