import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';

import { assertLoads, type CacheStack, POLYGON_TILE, polygonsLayer, startCacheStack } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';

describe('tile cache of projects stored in PostgreSQL', () => {
  let db: TestDatabase;
  let cs: CacheStack;
  let data: Fixtures;
  const api = (path: string): string => `/api/projects/atlas${path}?schema=maps`;

  before(async () => {
    db = await startTestDatabase();
    data = makeFixtures();
    cs = await startCacheStack({ psqlService: db.service });
  });
  after(async () => {
    await cs?.stop();
    await db?.stop();
    if (data) rmSync(data.dir, { recursive: true, force: true });
  });

  it('names the configuration <schema>_<project> and serves the project from the database', async () => {
    assert.equal(
      (await cs.stack.call('POST', '/api/projects/', { name: 'atlas', author: 'test', schema: 'maps' })).status,
      201,
    );
    const file = cs.configFile('maps_atlas');
    await assertLoads(file);
    assert.equal((await cs.stack.call('POST', api('/layers'), polygonsLayer(data))).status, 201);
    await assertLoads(file);
    assert.ok(
      readFileSync(file, 'utf8').includes(
        encodeURIComponent(`postgresql:?service=${db.service}&schema=maps&project=atlas`),
      ),
    );
    assert.deepEqual((await cs.stack.call('GET', api('/cache'))).body, { valid: true, storage: 'filesystem' });
    assert.equal((await cs.stack.call('GET', '/api/projects/atlas/cache')).status, 404, 'not in the public schema');

    const tile = await cs.tile('maps_atlas', 'polygons', POLYGON_TILE);
    assert.deepEqual(tile.pixel(128, 128), [229, 182, 54, 255], 'QGIS Server drew the project stored in PostgreSQL');
    assert.ok(existsSync(`${cs.configDir}/cache_data/maps_atlas/polygons`));
  });

  it('resets and removes the configuration with the schema-qualified project', async () => {
    assert.deepEqual(await cs.stack.call('POST', api('/cache/reset')), { status: 200, body: true });
    await assertLoads(cs.configFile('maps_atlas'));
    assert.ok(!existsSync(`${cs.configDir}/cache_data/maps_atlas/polygons`), 'reset cleared the tiles');
    assert.equal((await cs.stack.call('DELETE', '/api/projects/atlas?schema=maps')).status, 200);
    assert.ok(!existsSync(cs.configFile('maps_atlas')));
  });
});
