/**
 * The code beside the sentence (docs/errors.md): real failures of a running Steward, provoked as a
 * client would, each answered with its status, its documented code and its sentence; Fastify's own
 * refusals included, and the OpenAPI description listing the codes.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ERROR_CODES } from '../src/errors.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { rawRequest } from './support/raw-http.js';
import { type Stack, startStack } from './support/stack.js';

const TOKEN = 'error codes secret';
/** Wrong tokens an address may send in a minute: the last test spends them. */
const TOKEN_FAILURES = 4;
const PUBLISH_LIMIT = 64 * 1024;
/** Free space no disk has: /health/ready answers 503, which nothing else of these tests reads. */
const MIN_FREE_SPACE = Number.MAX_SAFE_INTEGER;

interface Refusal {
  status: number;
  code: unknown;
  error: unknown;
}

describe('error codes', () => {
  let stack: Stack;
  let data: Fixtures;

  /** A request with the token (or `token`, none for null), its body sent as `contentType`, answered as status, code and sentence. */
  const send = async (
    method: string,
    path: string,
    body?: string | Buffer,
    contentType = 'application/json',
    token: string | null = TOKEN,
  ): Promise<Refusal> => {
    const reply = await rawRequest(stack.api.url, {
      method,
      target: path,
      ...(body !== undefined && { body, contentType }),
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });
    if (reply.status < 400) return { status: reply.status, code: undefined, error: undefined };
    assert.match(reply.contentType, /^application\/json/, reply.text);
    const answer = JSON.parse(reply.text) as { code: unknown; error: unknown };
    assert.deepEqual(Object.keys(answer), ['error', 'code'], reply.text);
    return { status: reply.status, code: answer.code, error: answer.error };
  };
  const json = (method: string, path: string, body: unknown) => send(method, path, JSON.stringify(body));

  before(async () => {
    data = makeFixtures();
    stack = await startStack({
      apiToken: TOKEN,
      tokenFailures: TOKEN_FAILURES,
      dataRoots: [data.dir],
      publishBodyLimit: PUBLISH_LIMIT,
      minFreeSpace: MIN_FREE_SPACE,
    });
    assert.equal((await json('POST', '/api/projects', { name: 'town', author: 'a' })).status, 201);
    const points = { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` };
    assert.equal((await json('POST', '/api/projects/town/layers', points)).status, 201);
  });
  after(() => stack.stop());

  it('names what is missing: a project, a layer, a style, a version, a route', async () => {
    assert.deepEqual(await send('GET', '/api/projects/nowhere'), {
      status: 404,
      code: 'project_not_found',
      error: 'project "nowhere" does not exist',
    });
    assert.deepEqual(await send('GET', '/api/projects/town/layers/nowhere'), {
      status: 404,
      code: 'layer_not_found',
      error: 'project "town" has no layer "nowhere"',
    });
    assert.deepEqual(await send('GET', '/api/projects/town/versions/99'), {
      status: 404,
      code: 'version_not_found',
      error: 'project "town" has no version "99"',
    });
    assert.deepEqual(await send('GET', '/api/nothing/here'), {
      status: 404,
      code: 'route_not_found',
      error: 'no route GET /api/nothing/here',
    });
  });

  it('answers a name taken with name_taken, for a project and a layer, changing nothing', async () => {
    assert.deepEqual(await json('POST', '/api/projects', { name: 'town', author: 'b' }), {
      status: 409,
      code: 'name_taken',
      error: 'project "town" already exists',
    });
    const again = { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=lines` };
    assert.deepEqual(await json('POST', '/api/projects/town/layers', again), {
      status: 409,
      code: 'name_taken',
      error: 'project "town" already has a layer "points"',
    });
    const layers = await rawRequest(stack.api.url, {
      method: 'GET',
      target: '/api/projects/town/layers',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.deepEqual(JSON.parse(layers.text), ['points']);
  });

  it('answers a body its schema refuses with invalid_body, naming the field', async () => {
    const bad = { type: 'vector', name: 'lines', datasource: `${data.geopackage}|layername=lines`, crs: 'somewhere' };
    const refused = await json('POST', '/api/projects/town/layers', bad);
    assert.deepEqual([refused.status, refused.code], [400, 'invalid_body']);
    assert.match(String(refused.error), /^invalid body: body\/crs must /);
    const query = await send('GET', '/api/log?since=many');
    assert.deepEqual([query.status, query.code], [400, 'invalid_query'], String(query.error));
    assert.match(String(query.error), /^invalid querystring: querystring\/since must match pattern/);
  });

  it('answers what Fastify refuses before any route: JSON that is not, a type not taken, a body too large', async () => {
    const broken = await send('POST', '/api/projects', '{"name": "half');
    assert.deepEqual([broken.status, broken.code], [400, 'invalid_json'], String(broken.error));
    const xml = await send('POST', '/api/projects', '<project/>', 'application/xml');
    assert.deepEqual([xml.status, xml.code], [415, 'unsupported_media_type'], String(xml.error));
    const huge = await json('POST', '/api/projects', { name: 'huge', author: 'x'.repeat(2 * 1024 * 1024) });
    assert.deepEqual([huge.status, huge.code], [413, 'too_large'], String(huge.error));
    const upload = await send('PUT', '/api/projects/big/archive', Buffer.alloc(PUBLISH_LIMIT + 1), 'application/zip');
    assert.deepEqual(upload, {
      status: 413,
      code: 'too_large',
      error: `the upload is ${PUBLISH_LIMIT + 1} bytes, more than the ${PUBLISH_LIMIT} this server takes`,
    });
  });

  it('answers a datasource outside the data folders, and one GDAL cannot open, with their codes', async () => {
    const outside = { type: 'raster', name: 'elsewhere', datasource: '/etc/hostname' };
    const refused = await json('POST', '/api/projects/town/layers', outside);
    assert.deepEqual(refused, {
      status: 403,
      code: 'outside_data_roots',
      error: '/etc/hostname is not a dataset inside the data folders this server may use',
    });
    const garbage = join(data.dir, 'garbage.tif');
    writeFileSync(garbage, 'not a raster');
    const unreadable = await json('POST', '/api/projects/town/layers', {
      type: 'raster',
      name: 'g',
      datasource: garbage,
    });
    assert.deepEqual([unreadable.status, unreadable.code], [422, 'datasource_unreadable'], String(unreadable.error));
    assert.match(String(unreadable.error), /garbage\.tif/);
  });

  it('answers a readiness that fails with not_ready beside its checks', async () => {
    const reply = await rawRequest(stack.api.url, { method: 'GET', target: '/health/ready' });
    assert.equal(reply.status, 503, reply.text);
    const answer = JSON.parse(reply.text) as { status: unknown; code: unknown; error: unknown };
    assert.deepEqual([answer.status, answer.code], ['down', 'not_ready']);
    assert.match(String(answer.error), /^down: .*free/);
  });

  it('documents every code in the OpenAPI description, as the enum of the error body', async () => {
    const described = await rawRequest(stack.api.url, { method: 'GET', target: '/api/openapi.json' });
    const document = JSON.parse(described.text) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const errorBody = document.paths['/api/projects']?.['get']?.responses['4XX'] as {
      content: { 'application/json': { schema: { required: string[]; properties: { code: { enum: string[] } } } } };
    };
    const schema = errorBody.content['application/json'].schema;
    assert.deepEqual(schema.required, ['error', 'code']);
    assert.deepEqual(schema.properties.code.enum, [...ERROR_CODES]);
  });

  it('tells a request without a token from a wrong token, then throttles the wrong ones', async () => {
    const missing = await send('GET', '/api/projects', undefined, undefined, null);
    assert.deepEqual([missing.status, missing.code], [401, 'token_missing']);
    assert.match(String(missing.error), /^this API needs Authorization: Bearer <token>/);
    for (let attempt = 0; attempt < TOKEN_FAILURES; attempt++) {
      const wrong = await send('GET', '/api/projects', undefined, undefined, 'not the token');
      assert.deepEqual([wrong.status, wrong.code], [401, 'token_invalid'], `attempt ${attempt}`);
      assert.match(String(wrong.error), /this one is wrong, expired or revoked$/);
    }
    const throttled = await send('GET', '/api/projects', undefined, undefined, 'not the token');
    assert.deepEqual([throttled.status, throttled.code], [429, 'rate_limited']);
    assert.match(String(throttled.error), /^too many wrong tokens from this address; try again in \d+ s$/);
  });
});
