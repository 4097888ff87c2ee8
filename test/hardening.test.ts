import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { disguisedPaths } from './support/hostile.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { rawRequest } from './support/raw-http.js';
import { type Stack, startStack } from './support/stack.js';

/** Wrong tokens an address may send in a minute here; the earlier tests spend a few, the last the rest. */
const TOKEN_FAILURES = 8;

/** Every route and method the API describes, its parameters filled in, and the other protected paths. */
async function protectedRequests(describe: () => Promise<Response>): Promise<Array<[string, string]>> {
  const document = (await (await describe()).json()) as { paths: Record<string, Record<string, unknown>> };
  const listed = Object.entries(document.paths).flatMap(([template, item]) =>
    Object.keys(item)
      .filter((method) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map((method): [string, string] => [method.toUpperCase(), template.replace(/\{(\w+)\}/g, 'guarded')]),
  );
  const unlisted: Array<[string, string]> = [
    ['GET', '/metrics'],
    ['GET', '/api/projects/guarded/layers/mapped/map'],
  ];
  const open = new Set(['/health/live', '/health/ready', '/api/auth/config', '/api/auth/token']);
  return [...listed.filter(([, path]) => !open.has(path)), ...unlisted];
}

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
    stack = await startStack({
      apiToken: token,
      tokenFailures: TOKEN_FAILURES,
      bodyIdleSeconds: 1,
      dataRoots: [data.dir],
    });
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

  it('refuses every protected route and method under every spelling of its path without the token', async () => {
    const requests = await protectedRequests(() => authorised('GET', '/api/openapi.json'));
    assert.ok(requests.length > 60, `${requests.length} protected routes`);
    let sent = 0;
    const leaks: string[] = [];
    for (const [method, path] of requests) {
      for (const target of [path, ...disguisedPaths(path)]) {
        const reply = await rawRequest(stack.api.url, { method, target });
        sent++;
        const json = /^application\/json/.test(reply.contentType);
        if (![401, 404].includes(reply.status) || !json)
          leaks.push(`${method} ${target} -> ${reply.status} ${reply.contentType}`);
      }
    }
    assert.deepEqual(leaks, [], `${leaks.length} of ${sent} requests answered without the token`);
  });

  it('serves a route spelt with percent-encoding once the token is given, as the router reads it', async () => {
    const headers = { authorization: `Bearer ${token}` };
    for (const target of ['/%61pi/projects', '/%61%70%69/projects', '/api/%70rojects']) {
      const reply = await rawRequest(stack.api.url, { method: 'GET', target, headers });
      assert.equal(reply.status, 200, target);
      assert.ok((JSON.parse(reply.text) as string[]).includes('guarded'), target);
    }
  });

  it('keeps the console, the health checks, the API reader and its description open', async () => {
    for (const path of [
      '/',
      '/projects/guarded',
      '/health/live',
      '/docs',
      '/docs/static/index.html',
      '/api/auth/config',
      '/docs/json',
      '/docs/yaml',
      '/api/openapi.json',
    ]) {
      assert.equal((await fetch(stack.api.url + path)).status, 200, path);
    }
  });

  it('serves a stored style as an attachment, never as a page of its own origin', async () => {
    const qml = `<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<qgis version="3.22.16" xmlns:h="http://www.w3.org/1999/xhtml"><h:script>alert(sessionStorage.length)</h:script>
 <renderer-v2 type="singleSymbol"><symbols><symbol type="fill" name="0"><layer class="SimpleFill">
  <Option type="Map"><Option type="QString" name="color" value="51,102,204,255"/></Option>
 </layer></symbol></symbols></renderer-v2>
 <layerGeometryType>2</layerGeometryType>
</qgis>`;
    const stored = await fetch(`${stack.api.url}/api/projects/guarded/styles/scripted/qml`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/xml' },
      body: qml,
    });
    assert.equal(stored.status, 201, await stored.text());
    for (const path of ['/api/projects/guarded/styles/scripted', '/api/projects/guarded/styles/scripted/qml']) {
      const served = await authorised('GET', path);
      assert.equal(served.status, 200, path);
      assert.match(served.headers.get('content-disposition') ?? '', /^attachment; filename="scripted\.qml"/, path);
      assert.equal(served.headers.get('x-content-type-options'), 'nosniff', path);
      assert.match(served.headers.get('content-security-policy') ?? '', /^default-src 'none'/, path);
      assert.equal(served.headers.get('referrer-policy'), 'no-referrer', path);
    }
    const sld = await authorised('GET', '/api/projects/guarded/layers/inside/style.sld');
    assert.equal(sld.status, 200);
    assert.match(sld.headers.get('content-disposition') ?? '', /^attachment; filename="inside\.sld"/);
    const page = await fetch(`${stack.api.url}/projects/guarded`);
    const policy = page.headers.get('content-security-policy') ?? '';
    assert.match(policy, /script-src 'self'(;|$)/);
    assert.match(policy, /frame-ancestors 'none'/);
  });

  it("refuses documents and expressions nested too deep, and PostgreSQL's own schemas, as the client's error", async () => {
    const deep = `<qgis version="3.22.16">${'<a>'.repeat(3000)}${'</a>'.repeat(3000)}</qgis>`;
    const qml = await fetch(`${stack.api.url}/api/projects/guarded/styles/deep/qml`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/xml' },
      body: deep,
    });
    assert.equal(qml.status, 400);
    assert.match(((await qml.json()) as { error: string }).error, /nested deeper than 200/);
    const expression = `${'('.repeat(1000)}inside@1${')'.repeat(1000)}`;
    const calculated = await authorised('POST', '/api/processing/raster/calculator/guarded', {
      expression,
      output: join(data.dir, 'deep.tif'),
    });
    assert.equal(calculated.status, 400);
    assert.match(((await calculated.json()) as { error: string }).error, /deeper than 100 levels/);
    const project = await fetch(`${stack.api.url}/api/projects/deep/archive`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/xml' },
      body: `<qgis version="3.22.16" projectname="deep">${deep.slice(deep.indexOf('>') + 1)}`,
    });
    // A project upload that is not one QGIS wrote is 422 (docs/publishing.md), as any XML it cannot read.
    assert.equal(project.status, 422, await project.clone().text());
    assert.match(((await project.json()) as { error: string }).error, /nested deeper than 200/);
    assert.ok(!readdirSync(stack.projectsDir).includes('deep'), 'no project is made of it');
    for (const schema of ['pg_toast', 'pg_catalog', 'information_schema', 'PG_TOAST']) {
      assert.equal((await authorised('GET', `/api/projects?schema=${schema}`)).status, 403, schema);
      assert.equal((await authorised('GET', `/api/projects/guarded?schema=${schema}`)).status, 403, schema);
    }
  });

  /** Sends `head` (a request, the start of its body) and stops: the answer, which must be 408 after 1 s. */
  async function stalled(head: string): Promise<void> {
    const { port } = new URL(stack.api.url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(head);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const started = Date.now();
    await once(socket, 'close');
    const waited = Date.now() - started;
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(answer, /"error":"the request body stopped arriving for 1 s"/);
    assert.ok(waited >= 900 && waited < 5000, `closed after ${waited} ms`);
  }

  it('answers 408 and closes the connection when a request body stops arriving', async () => {
    await stalled(
      'POST /api/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${token}\r\nContent-Length: 100\r\n\r\n{"name":`,
    );
  });

  it('answers 408 to a project upload read off the event loop whose body stops arriving', async () => {
    // A bundle's first bytes: its body is read from the socket by the thread that receives uploads.
    await stalled(
      'PUT /api/projects/stalled/archive HTTP/1.1\r\nHost: x\r\nContent-Type: application/zip\r\n' +
        `Authorization: Bearer ${token}\r\nContent-Length: 100000\r\n\r\nPK\x03\x04`,
    );
    assert.equal((await authorised('GET', '/api/projects/stalled')).status, 404);
  });

  it('refuses an address that sent too many wrong tokens, right token or not, with Retry-After', async () => {
    const wrong = { authorization: 'Bearer wrong' };
    let refused = 0;
    while ((await fetch(`${stack.api.url}/api/projects`, { headers: wrong })).status === 401) {
      refused++;
      assert.ok(refused <= TOKEN_FAILURES, `still 401 after ${refused} wrong tokens`);
    }
    for (const path of ['/api/projects', '/api/projects/guarded/layers/mapped/map']) {
      for (const headers of [wrong, { authorization: `Bearer ${token}` }]) {
        const refused = await fetch(stack.api.url + path, { headers });
        assert.equal(refused.status, 429, `${path} ${headers.authorization}`);
        const wait = Number(refused.headers.get('retry-after'));
        assert.ok(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
        assert.equal(typeof ((await refused.json()) as { error: unknown }).error, 'string');
      }
    }
    assert.equal((await fetch(`${stack.api.url}/health/live`)).status, 200, 'the open routes stay open');
  });
});
