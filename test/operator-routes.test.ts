/**
 * The routes of the console's operator pages, on a real Steward with access control, QGIS Server
 * with the monitoring plugin, and MapProxy: Steward's own log read from a cursor, the settings in
 * effect, an instance's log from a cursor, the cache's disk use by layer, and the API description
 * open to its reader with a bearer scheme.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, relative } from 'node:path';

import { type CacheStack, polygonsLayer, startCacheStack } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { filesUnder } from './support/mapproxy.js';
import { after, before, describe, it } from './support/node-test.js';
import { seededLevels, waitForJob } from './support/seeding.js';
import { registeredIds } from './support/test-storage.js';
import { waitFor } from './support/wait.js';

const TOKEN = 'operator pages token';

interface LogLine {
  cursor: number;
  level: string;
  time: string;
  message: string;
  fields: Record<string, unknown>;
}
interface LogPage {
  lines: LogLine[];
  next: number;
  missed: number;
}

describe('the routes of the operator pages', () => {
  let cs: CacheStack;
  let data: Fixtures;
  let viewer: string;
  const admin = (method: string, path: string, body?: unknown) => apiCall(cs.stack.api.url, method, path, body, TOKEN);
  const log = async (query: string): Promise<LogPage> => {
    const reply = await admin('GET', `/api/log${query}`);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return reply.body as LogPage;
  };

  before(async () => {
    data = makeFixtures();
    cs = await startCacheStack({ apiToken: TOKEN, dataRoots: [data.dir], logLevel: 'info' });
    assert.equal((await admin('PUT', '/api/roles/viewer', { projects: { '*': { access: 'read' } } })).status, 201);
    const made = await admin('POST', '/api/tokens', { name: 'a viewer', roles: ['viewer'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    viewer = (made.body as { token: string }).token;
  });
  after(async () => {
    await cs?.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it("answers Steward's own log lines after a cursor, by level, to administrators only", async () => {
    const first = await log('');
    assert.ok(
      first.lines.some((line) => line.level === 'info' && /^Server listening at http:/.test(line.message)),
      'the start-up is in the log',
    );
    assert.equal(first.lines.at(-1)?.cursor, first.next);
    assert.equal(first.missed, 0);
    assert.equal((await admin('GET', '/api/projects/nowhere')).status, 404);
    const later = await log(`?since=${first.next}`);
    assert.ok(later.lines.length > 0 && later.lines.every((line) => line.cursor > first.next));
    const completed = later.lines.find(
      (line) => line.message === 'request completed' && JSON.stringify(line.fields).includes('"statusCode":404'),
    );
    assert.ok(completed, JSON.stringify(later.lines.slice(-5)));
    assert.match(completed.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const readers = later.lines.filter((line) => JSON.stringify(line.fields).includes('/api/log'));
    assert.deepEqual(readers, [], "the log's own readers are not logged");

    // The same lines, at warn or above only; the cursor still reaches the last line.
    const all = await log('?level=trace');
    const warnings = await log('?level=warn');
    assert.deepEqual(
      warnings.lines.map((line) => line.cursor),
      all.lines.filter((line) => ['warn', 'error', 'fatal'].includes(line.level)).map((line) => line.cursor),
    );
    assert.ok(warnings.next >= all.next);

    for (const query of ['?since=-1', '?since=1.5', '?level=loud']) {
      const refused = await admin('GET', `/api/log${query}`);
      assert.equal(refused.status, 400, query);
      assert.equal(typeof (refused.body as { error: unknown }).error, 'string', query);
    }
    for (const path of ['/api/log', '/api/server/settings']) {
      assert.equal((await apiCall(cs.stack.api.url, 'GET', path, undefined, viewer)).status, 403, path);
      assert.equal((await apiCall(cs.stack.api.url, 'GET', path)).status, 401, path);
    }
  });

  it('answers the settings in effect, never a secret', async () => {
    const reply = await admin('GET', '/api/server/settings');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const settings = reply.body as {
      storage: { kind: string; projects_dir: string };
      data: { data_roots: string[] };
      cache: { enabled: boolean; mapproxy_projects_dir: string };
      access: { token_required: boolean };
      limits: { body: number };
      qgis_server: { url: string; fastcgi: string[] };
    };
    assert.equal(settings.storage.projects_dir, cs.stack.projectsDir);
    assert.deepEqual(settings.data.data_roots, [data.dir]);
    assert.deepEqual(
      { enabled: settings.cache.enabled, dir: settings.cache.mapproxy_projects_dir },
      { enabled: true, dir: cs.configDir },
    );
    assert.equal(settings.access.token_required, true);
    assert.equal(settings.limits.body, 1024 * 1024);
    assert.equal(settings.qgis_server.url, cs.stack.qgis.url);
    assert.ok(!JSON.stringify(settings).includes(TOKEN), 'the token is not answered');
  });

  it("answers an instance's log lines after a cursor", async () => {
    // The stack started once an instance had registered.
    const ids = await registeredIds(admin);
    assert.ok(ids.length > 0);
    const read = async (id: string, query = ''): Promise<{ lines: string[]; next: number }> => {
      const reply = await admin('GET', `/api/instances/${encodeURIComponent(id)}/logs${query}`);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      return reply.body as { lines: string[]; next: number };
    };
    const cursors = new Map<string, number>();
    for (const id of ids) {
      const whole = await read(id);
      assert.equal(typeof whole.next, 'number');
      cursors.set(id, whole.next);
      const again = await read(id, `?since=${whole.next}`);
      assert.equal(again.lines.length, again.next - whole.next, 'only the lines logged since, if any');
    }
    assert.equal((await admin('POST', '/api/projects', { name: 'logged', author: 'test' })).status, 201);
    const map = encodeURIComponent(cs.qgsFile('logged'));
    const capabilities = await fetch(`${cs.stack.qgis.url}?SERVICE=WMS&REQUEST=GetCapabilities&MAP=${map}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(capabilities.status, 200, await capabilities.text());
    const newer = await waitFor(
      () => 'the request to be logged by an instance',
      async () => {
        const pages = await Promise.all(ids.map(async (id) => read(id, `?since=${cursors.get(id) ?? 0}`)));
        const lines = pages.flatMap((page) => page.lines);
        return lines.some((line) => line.includes('REQUEST:GetCapabilities')) ? pages : undefined;
      },
    );
    for (const [index, page] of newer.entries()) {
      const since = cursors.get(ids[index] ?? '') ?? 0;
      assert.equal(page.next, since + page.lines.length, 'only the lines after the cursor, numbered on');
    }
    const refused = await admin('GET', `/api/instances/${encodeURIComponent(ids[0] ?? '')}/logs?since=x`);
    assert.equal(refused.status, 400);
  });

  it("measures each layer's cached tiles, files and bytes, after seeding an area", async () => {
    assert.equal((await admin('POST', '/api/projects', { name: 'measured', author: 'test' })).status, 201);
    for (const name of ['polygons', 'unseeded']) {
      const added = await admin('POST', '/api/projects/measured/layers', { ...polygonsLayer(data), name });
      assert.equal(added.status, 201, JSON.stringify(added.body));
    }
    const empty = await admin('GET', '/api/projects/measured/cache/usage');
    assert.deepEqual(empty.body, {
      storage: 'filesystem',
      layers: [
        { name: 'polygons', tiles: 0, bytes: 0 },
        { name: 'unseeded', tiles: 0, bytes: 0 },
      ],
      total: { tiles: 0, bytes: 0 },
    });
    const area: [number, number, number, number] = [1, 44, 1.5, 44.5];
    const seed = await admin('POST', '/api/projects/measured/cache/seed', {
      layers: ['polygons'],
      min_zoom: 0,
      max_zoom: 7,
      extent: area,
      extent_crs: 'EPSG:4326',
    });
    assert.equal(seed.status, 202, JSON.stringify(seed.body));
    const job = await waitForJob(admin, (seed.body as { id: string }).id);
    assert.equal(job.state, 'succeeded', job.error ?? '');
    const dir = join(cs.configDir, 'cache_data', 'measured', 'polygons');
    const tiles = filesUnder(dir, '.png').map((file) => relative(dir, file).replace(/\.png$/, ''));
    assert.deepEqual(tiles.sort(), seededLevels(area, 0, 7), 'the tiles of the area only');
    const sizes = execFileSync('find', [dir, '-type', 'f', '-printf', '%s\\n'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
    const bytes = sizes.reduce((sum, size) => sum + size, 0);
    const usage = (await admin('GET', '/api/projects/measured/cache/usage')).body as {
      layers: Array<{ name: string; tiles: number; bytes: number }>;
      total: { tiles: number; bytes: number };
    };
    assert.deepEqual(usage.layers, [
      { name: 'polygons', tiles: sizes.length, bytes },
      { name: 'unseeded', tiles: 0, bytes: 0 },
    ]);
    assert.deepEqual(usage.total, { tiles: sizes.length, bytes });
    const missing = await admin('GET', '/api/projects/nowhere/cache/usage');
    assert.equal(missing.status, 404);
  });

  it('serves the API description to its reader without a token, with a bearer scheme for its Authorize button', async () => {
    for (const path of ['/docs/json', '/api/openapi.json', '/docs/yaml']) {
      assert.equal((await fetch(cs.stack.api.url + path)).status, 200, path);
    }
    const document = (await (await fetch(`${cs.stack.api.url}/docs/json`)).json()) as {
      components: { securitySchemes: Record<string, unknown> };
      security: unknown;
      paths: Record<string, Record<string, { security?: unknown }>>;
    };
    assert.deepEqual(document.components.securitySchemes['bearer'], {
      type: 'http',
      scheme: 'bearer',
      description: 'An API token (STEWARD_API_TOKEN, or one made at /api/tokens) or an OpenID Connect access token',
    });
    assert.deepEqual(document.security, [{ bearer: [] }]);
    assert.deepEqual(document.paths['/health/live']?.['get']?.security, [], 'an open route needs no token');
    assert.deepEqual(document.paths['/api/auth/token']?.['post']?.security, []);
    assert.equal(document.paths['/api/log']?.['get']?.security, undefined, 'the others need the global bearer');
  });
});
