import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { type Stack, startStack } from './support/stack.js';

describe('with STEWARD_API_TOKEN and STEWARD_DATA_ROOTS', () => {
  let stack: Stack;
  let data: Fixtures;
  let outside: Fixtures;
  const token = 'correct horse battery staple';
  const authorised = async (method: string, path: string, body?: unknown): Promise<Response> =>
    fetch(stack.api.url + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  before(async () => {
    data = makeFixtures();
    outside = makeFixtures();
    stack = await startStack({ apiToken: token, dataRoots: [data.dir] });
    assert.equal((await authorised('POST', '/api/projects/', { name: 'guarded', author: 'a' })).status, 201);
  });
  after(() => stack.stop());

  it('refuses /api requests without the token, with WWW-Authenticate', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: `Basic ${token}` },
      { authorization: `Bearer ${token}x` },
    ];
    for (const headers of attempts) {
      const response = await fetch(`${stack.api.url}/api/projects`, { headers });
      assert.equal(response.status, 401);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal(typeof ((await response.json()) as { error: unknown }).error, 'string');
    }
    const write = await fetch(`${stack.api.url}/api/projects/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'intruder', author: 'x' }),
    });
    assert.equal(write.status, 401);
    assert.ok(!readdirSync(stack.projectsDir).includes('intruder'));
  });

  it('serves /api requests with the token', async () => {
    const response = await authorised('GET', '/api/projects');
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), ['guarded']);
  });

  it('takes datasources inside the data roots', async () => {
    const response = await authorised('POST', '/api/projects/guarded/layers', {
      type: 'raster',
      name: 'inside',
      datasource: data.rgbTiff,
    });
    assert.equal(response.status, 201);
  });

  it('refuses datasources outside the data roots, through .. and symbolic links too', async () => {
    const link = join(data.dir, 'escape');
    mkdirSync(join(data.dir, 'sub'));
    symlinkSync(outside.dir, link);
    const attempts = [
      outside.rgbTiff,
      join(data.dir, 'sub', '..', '..', outside.dir.split('/').pop() ?? '', 'rgb.tif'),
      join(link, 'rgb.tif'),
      '/etc/passwd',
      `/vsicurl/http://127.0.0.1:1/${data.rgbTiff}`,
    ];
    for (const datasource of attempts) {
      const response = await authorised('POST', '/api/projects/guarded/layers', {
        type: 'raster',
        name: 'outside',
        datasource,
      });
      assert.equal(response.status, 403, datasource);
    }
    assert.deepEqual(await (await authorised('GET', '/api/projects/guarded/layers')).json(), ['inside']);
  });

  it('answers 413 to a body over 1 MiB', async () => {
    const response = await authorised('POST', '/api/projects/', { name: 'big', author: 'x'.repeat(1024 * 1024) });
    assert.equal(response.status, 413);
    assert.equal(typeof ((await response.json()) as { error: unknown }).error, 'string');
  });

  it('draws a map for a request with the token only', async () => {
    assert.equal(
      (
        await authorised('POST', '/api/projects/guarded/layers', {
          type: 'raster',
          name: 'mapped',
          datasource: data.rgbTiff,
        })
      ).status,
      201,
    );
    const path = '/api/projects/guarded/layers/mapped/map';
    const refusals: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong' }];
    for (const headers of refusals) {
      const refused = await fetch(stack.api.url + path, { headers });
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal(typeof ((await refused.json()) as { error: unknown }).error, 'string');
    }
    const drawn = await authorised('GET', path);
    assert.equal(drawn.status, 200);
    assert.equal(drawn.headers.get('content-type'), 'image/png');
    assert.deepEqual(decodePng(Buffer.from(await drawn.arrayBuffer())).pixel(200, 200), [200, 40, 90, 255]);
  });
});
