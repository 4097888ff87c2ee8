/**
 * Identities and what they may do, on real HTTP: API tokens and roles through one API with its
 * QGIS Server (a viewer reads its project and not the others, cannot write or administer; an
 * editor writes; a revoked or expired token is refused), and two API processes on one database,
 * which agree on tokens and roles.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PostgresAccessStore } from '../src/access/postgres-access.js';
import { type TokenRecord } from '../src/access/records.js';
import { newToken } from '../src/access/token-secret.js';
import { PostgresDatabase } from '../src/storage/pg-database.js';
import { type ApiProcess, startApiProcess } from './support/api-process.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { type Stack, startStack } from './support/stack.js';
import { until } from './support/wait.js';
import { polygonLayer } from './support/write-bodies.js';

const ADMIN = 'the bootstrap administrator token';

type Reply = { status: number; body: unknown };

const VIEWER_ROLE = {
  projects: {
    town: {
      access: 'read',
      layers: { secret: { read: false }, roads: { hidden_attributes: ['owner'], filter: `"kind" = 'public'` } },
    },
  },
  services: { 'WFS-T': false },
};

describe('API tokens and roles on one API', () => {
  let stack: Stack;
  let fixtures: Fixtures;
  const as = (token: string | undefined) => (method: string, path: string, body?: unknown) =>
    apiCall(stack.api.url, method, path, body, token);
  const admin = (method: string, path: string, body?: unknown): Promise<Reply> => as(ADMIN)(method, path, body);
  let viewer = '';
  let viewerId = '';

  const expect = async (reply: Promise<Reply>, status: number, what: string): Promise<unknown> => {
    const { status: got, body } = await reply;
    assert.equal(got, status, `${what}: ${JSON.stringify(body)}`);
    return body;
  };

  before(async () => {
    fixtures = makeFixtures();
    stack = await startStack({ apiToken: ADMIN, tokenFailures: 100 }, {}, 'filesystem', 'development');
    for (const name of ['town', 'harbour']) {
      await expect(admin('POST', '/api/projects', { name, author: 'a' }), 201, `create ${name}`);
      for (const layer of ['roads', 'secret'])
        await expect(
          admin('POST', `/api/projects/${name}/layers`, polygonLayer(layer, fixtures.geopackage)),
          201,
          `${name}/${layer}`,
        );
    }
  });
  after(() => stack.stop());

  it('says who the bootstrap token is', async () => {
    assert.deepEqual(await expect(admin('GET', '/api/whoami'), 200, 'whoami'), {
      name: 'bootstrap',
      roles: [],
      admin: true,
      kind: 'bootstrap',
    });
    const anyone = await as(undefined)('GET', '/api/whoami');
    assert.equal(anyone.status, 401);
  });

  it('stores roles of the shape of the issue, and refuses bad ones', async () => {
    await expect(admin('PUT', '/api/roles/viewer', VIEWER_ROLE), 201, 'new role');
    await expect(admin('PUT', '/api/roles/viewer', VIEWER_ROLE), 200, 'replaced role');
    assert.deepEqual(await expect(admin('GET', '/api/roles/viewer'), 200, 'role'), VIEWER_ROLE);
    await expect(admin('PUT', '/api/roles/editor', { projects: { town: { access: 'write' } } }), 201, 'editor');
    assert.deepEqual(Object.keys((await admin('GET', '/api/roles')).body as object), ['editor', 'viewer']);
    await expect(admin('PUT', '/api/roles/bad', { projects: { town: { access: 'owner' } } }), 400, 'bad access');
    await expect(admin('PUT', '/api/roles/bad', { services: { WFS2: false } }), 400, 'unknown service');
    await expect(admin('PUT', '/api/roles/bad', { extra: 1 }), 400, 'unknown member');
    await expect(admin('PUT', '/api/roles/bad', { projects: { 'a/b/c': { access: 'read' } } }), 422, 'bad key');
    await expect(admin('PUT', '/api/roles/bad', { projects: { '../x': { access: 'read' } } }), 400, 'bad name');
    await expect(admin('PUT', '/api/roles/-bad', {}), 422, 'bad role name');
    await expect(admin('PUT', '/api/roles/anonymous', { admin: true }), 422, 'anonymous administrator');
    await expect(admin('GET', '/api/roles/bad'), 404, 'no such role');
    assert.ok(!readdirSync(join(stack.projectsDir, '.access', 'roles')).some((file) => file.includes('bad')));
  });

  it('makes a token whose secret is answered once and stored hashed', async () => {
    await expect(admin('POST', '/api/tokens', { name: 'ci', roles: ['nobody'] }), 422, 'unknown role');
    await expect(
      admin('POST', '/api/tokens', { name: 'ci', roles: ['viewer'], expires: '2001-01-01T00:00:00Z' }),
      422,
      'past',
    );
    await expect(admin('POST', '/api/tokens', { name: 'ci', roles: ['viewer'], expires: 'soon' }), 400, 'not a date');
    await expect(admin('POST', '/api/tokens', { name: 'ci' }), 400, 'no roles');
    const made = (await expect(
      admin('POST', '/api/tokens', { name: 'ci', roles: ['viewer'], expires: '2099-01-01T00:00:00Z' }),
      201,
      'token',
    )) as { id: string; token: string };
    viewer = made.token;
    viewerId = made.id;
    assert.match(viewer, /^stw_[0-9a-f]{16}_/);
    const listed = (await expect(admin('GET', '/api/tokens'), 200, 'tokens')) as Array<Record<string, unknown>>;
    assert.deepEqual(listed, [
      {
        id: made.id,
        name: 'ci',
        roles: ['viewer'],
        created: listed[0]?.['created'],
        expires: '2099-01-01T00:00:00.000Z',
        expired: false,
      },
    ]);
    const stored = readFileSync(join(stack.projectsDir, '.access', 'tokens', `${made.id}.json`), 'utf8');
    assert.ok(!stored.includes(viewer.slice(-20)), 'the secret is not stored');
    assert.match(stored, /"hash":"scrypt\$/);
    assert.deepEqual(await expect(as(viewer)('GET', '/api/whoami'), 200, 'whoami'), {
      name: 'ci',
      roles: ['viewer'],
      admin: false,
      kind: 'token',
    });
  });

  it('lets a viewer read its project and nothing else', async () => {
    const call = as(viewer);
    assert.deepEqual(await expect(call('GET', '/api/projects'), 200, 'listing'), ['town']);
    await expect(call('GET', '/api/projects/town'), 200, 'town');
    const hidden = await call('GET', '/api/projects/harbour');
    const missing = await call('GET', '/api/projects/nowhere');
    assert.equal(hidden.status, 404);
    assert.deepEqual(hidden.body, { error: 'project "harbour" does not exist', code: 'project_not_found' });
    assert.deepEqual(missing.body, { error: 'project "nowhere" does not exist', code: 'project_not_found' });
    await expect(call('GET', '/api/projects/harbour/layers'), 404, 'layers of another project');
    assert.deepEqual(await expect(call('GET', '/api/projects/town/layers'), 200, 'layers'), ['roads']);
    // What each layer's own read tells, for the layers listed only.
    assert.deepEqual(await expect(call('GET', '/api/projects/town/layer-summaries'), 200, 'summaries'), [
      await expect(call('GET', '/api/projects/town/layers/roads'), 200, 'roads'),
    ]);
    await expect(call('GET', '/api/projects/harbour/layer-summaries'), 404, 'summaries of another project');
    await expect(call('GET', '/api/projects/town/layers/secret'), 404, 'a hidden layer');
    const readFor = async (layer: string): Promise<unknown> =>
      ((await call('GET', `/api/projects/town/styles/none/qml?layer=${layer}`)).body as { code: unknown }).code;
    assert.equal(await readFor('secret'), 'layer_not_found', 'a hidden layer named by the query');
    assert.equal(await readFor('roads'), 'style_not_found', 'a readable layer named by the query');
    await expect(call('GET', '/api/projects/town/layers/roads'), 200, 'a readable layer');
    await expect(call('GET', '/api/checks'), 200, 'checks');
  });

  it("draws a viewer's maps, not those of hidden layers or projects, whether or not the token was just verified", async () => {
    for (let round = 0; round < 2; round++) {
      const response = await fetch(`${stack.api.url}/api/projects/town/layers/roads/map`, {
        headers: { authorization: `Bearer ${viewer}` },
      });
      assert.equal(response.status, 200);
      assert.ok(decodePng(Buffer.from(await response.arrayBuffer())).width > 0);
      for (const path of ['/api/projects/town/layers/secret/map', '/api/projects/harbour/layers/roads/map']) {
        await expect(as(viewer)('GET', path), 404, path);
      }
    }
  });

  it('refuses a viewer every write (403) and every administration (403)', async () => {
    const call = as(viewer);
    const before = await admin('GET', '/api/projects/town');
    await expect(call('PATCH', '/api/projects/town', { title: 'mine' }), 403, 'metadata');
    await expect(call('PATCH', '/api/projects/harbour', { title: 'mine' }), 404, 'metadata of another');
    await expect(call('POST', '/api/projects', { name: 'town2', author: 'a' }), 403, 'create');
    await expect(call('DELETE', '/api/projects/town'), 403, 'delete');
    await expect(call('GET', '/api/tokens'), 403, 'tokens');
    await expect(call('POST', '/api/tokens', { name: 'x', roles: [] }), 403, 'make a token');
    await expect(call('GET', '/api/roles'), 403, 'roles');
    await expect(call('PUT', '/api/roles/viewer', { admin: true }), 403, 'raise itself');
    await expect(call('GET', '/api/instances'), 403, 'instances');
    await expect(call('GET', '/metrics'), 403, 'metrics');
    await expect(call('GET', '/api/datasources/files?path=/'), 403, 'datasources');
    assert.deepEqual((await admin('GET', '/api/projects/town')).body, before.body);
  });

  it('lets an editor write its project, but not delete it', async () => {
    const { token } = (await admin('POST', '/api/tokens', { name: 'ed', roles: ['editor'] })).body as { token: string };
    const call = as(token);
    await expect(call('PATCH', '/api/projects/town', { title: 'Town' }), 200, 'metadata');
    await expect(call('DELETE', '/api/projects/town'), 403, 'delete');
    await expect(call('POST', '/api/projects/town/layers', polygonLayer('more', fixtures.geopackage)), 201, 'layer');
    await expect(call('DELETE', '/api/projects/town/layers/more'), 200, 'remove the layer');
  });

  it('gives an administrator role everything', async () => {
    await expect(admin('PUT', '/api/roles/operators', { admin: true }), 201, 'role');
    const { token } = (await admin('POST', '/api/tokens', { name: 'ops', roles: ['operators'] })).body as {
      token: string;
    };
    assert.equal(((await expect(as(token)('GET', '/api/tokens'), 200, 'tokens')) as unknown[]).length, 3);
    assert.deepEqual((await as(token)('GET', '/api/projects')).body, ['harbour', 'town']);
  });

  it('refuses a token with a wrong secret, a revoked one and an expired one with 401 JSON', async () => {
    const wrong = `${viewer.slice(0, -4)}AAAA`;
    const reply = await fetch(`${stack.api.url}/api/projects`, { headers: { authorization: `Bearer ${wrong}` } });
    assert.equal(reply.status, 401);
    assert.match(reply.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal(typeof ((await reply.json()) as { error: unknown }).error, 'string');

    await expect(admin('DELETE', `/api/tokens/${viewerId}`), 200, 'revoke');
    await expect(admin('DELETE', `/api/tokens/${viewerId}`), 404, 'revoke again');
    await expect(as(viewer)('GET', '/api/projects/town'), 401, 'revoked');
    const map = await fetch(`${stack.api.url}/api/projects/town/layers/roads/map`, {
      headers: { authorization: `Bearer ${viewer}` },
    });
    assert.equal(map.status, 401, 'a revoked token draws no map');

    const soon = new Date(Date.now() + 3000).toISOString();
    const { token } = (await admin('POST', '/api/tokens', { name: 'brief', roles: ['viewer'], expires: soon }))
      .body as { token: string };
    await expect(as(token)('GET', '/api/projects/town'), 200, 'before it expires');
    await until(
      'the token to expire',
      async () => (await as(token)('GET', '/api/projects/town')).status === 401,
      5000,
      100,
    );
    const listed = (await admin('GET', '/api/tokens')).body as Array<{ name: string; expired: boolean }>;
    assert.equal(listed.find((each) => each.name === 'brief')?.expired, true);
  });

  it('gives requests without a token the anonymous role, when there is one', async () => {
    const anyone = as(undefined);
    await expect(admin('PUT', '/api/roles/anonymous', { projects: { harbour: { access: 'read' } } }), 201, 'role');
    assert.deepEqual(await expect(anyone('GET', '/api/projects'), 200, 'listing'), ['harbour']);
    const map = await fetch(`${stack.api.url}/api/projects/harbour/layers/roads/map`);
    assert.equal(map.status, 200);
    await expect(anyone('GET', '/api/projects/town'), 401, 'a project it may not read');
    await expect(anyone('PATCH', '/api/projects/harbour', { title: 'x' }), 401, 'a write');
    await expect(admin('DELETE', '/api/roles/anonymous'), 200, 'remove the role');
    await expect(anyone('GET', '/api/projects'), 401, 'no anonymous role');
  });
});

describe('two API processes on one database', () => {
  let db: TestDatabase;
  const apis: ApiProcess[] = [];

  before(async () => {
    db = await startTestDatabase();
    for (let index = 0; index < 2; index++) {
      apis.push(
        await startApiProcess({
          STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/ows/',
          STEWARD_QGISSERVER_PROJECTS_DIR: mkdtempSync(join(tmpdir(), 'steward-access-')),
          STEWARD_QGISSERVER_PROJECTS_PSQL_SERVICE: db.service,
          STEWARD_API_TOKEN: ADMIN,
        }),
      );
    }
  });
  after(async () => {
    for (const api of apis) await api.kill();
    await db.stop();
  });

  it("reads only the tokens' changes since its last read, and every revocation", async () => {
    const databases: PostgresDatabase[] = [];
    const store = async (): Promise<PostgresAccessStore> => {
      databases.push(await PostgresDatabase.connect(db.service, [db.serviceFile]));
      return new PostgresAccessStore(databases.at(-1) as PostgresDatabase);
    };
    const [one, two] = [await store(), await store()];
    const record = (name: string): TokenRecord => ({
      id: newToken().id,
      name,
      roles: ['viewer'],
      created: new Date().toISOString(),
      expires: null,
      hash: 'scrypt$not-a-secret',
    });
    const ids = async (of: PostgresAccessStore): Promise<string[]> =>
      (await of.tokens()).map((token) => token.id).sort();
    const inDatabase = async (): Promise<string[]> =>
      (await db.sql<{ id: string }>('SELECT id FROM steward.access_tokens')).map((row) => row.id).sort();
    const [kept, revoked] = [record('kept'), record('revoked')];
    await one.addToken(kept);
    await one.addToken(revoked);
    assert.deepEqual(await ids(two), await inDatabase());
    // A row changed behind the stores' back takes no version: a store that read it does not read it again.
    await db.sql(`UPDATE steward.access_tokens SET name = 'renamed' WHERE id = $1`, [kept.id]);
    assert.equal((await two.tokens()).find((token) => token.id === kept.id)?.name, 'kept');
    await one.removeToken(revoked.id);
    assert.ok(!(await ids(two)).includes(revoked.id), 'a revocation by the other store is read');
    // Made and revoked from both stores at once, read meanwhile: every change is read, in order.
    const made = Array.from({ length: 40 }, (_, index) => record(`token-${index}`));
    await Promise.all([
      ...made.map((token, index) => (index % 2 === 0 ? one : two).addToken(token)),
      ...made.slice(0, 10).map(async (token) => {
        await new Promise((wake) => setTimeout(wake, 5));
        await (token.name.endsWith('1') ? two : one).removeToken(token.id);
      }),
      ...Array.from({ length: 10 }, () => two.tokens()),
    ]);
    const fresh = await store();
    assert.deepEqual(await ids(two), await inDatabase());
    assert.deepEqual(await ids(one), await inDatabase());
    assert.deepEqual(await ids(fresh), await inDatabase());
    assert.equal((await fresh.tokens()).find((token) => token.id === kept.id)?.name, 'renamed');
    // Revocations older than an hour are pruned as the next one is made: a store that had not read
    // one reads every token again.
    const [old, next] = [record('old'), record('next')];
    await one.addToken(old);
    await one.addToken(next);
    const stale = await store();
    await stale.tokens();
    await one.removeToken(old.id);
    await db.sql(`UPDATE steward.access_token_removals SET removed = now() - interval '2 hours'`);
    await one.removeToken(next.id);
    const removals = await db.sql<{ id: string }>('SELECT id FROM steward.access_token_removals');
    assert.deepEqual(
      removals.map((row) => row.id),
      [next.id],
    );
    assert.deepEqual(await ids(stale), await inDatabase());
    assert.deepEqual(await ids(two), await inDatabase());
    assert.deepEqual(await ids(one), await inDatabase());
    for (const database of databases) await database.close();
  });

  it('agree on tokens and roles at once, and on revocations', async () => {
    const [a, b] = apis as [ApiProcess, ApiProcess];
    assert.equal((await apiCall(a.url, 'PUT', '/api/roles/viewer', VIEWER_ROLE, ADMIN)).status, 201);
    const made = await apiCall(a.url, 'POST', '/api/tokens', { name: 'ci', roles: ['viewer'] }, ADMIN);
    assert.equal(made.status, 201);
    const { id, token } = made.body as { id: string; token: string };
    assert.deepEqual((await apiCall(b.url, 'GET', '/api/whoami', undefined, token)).body, {
      name: 'ci',
      roles: ['viewer'],
      admin: false,
      kind: 'token',
    });
    assert.equal((await apiCall(b.url, 'GET', '/api/tokens', undefined, ADMIN)).body instanceof Array, true);
    assert.equal((await apiCall(b.url, 'GET', '/api/tokens', undefined, token)).status, 403);
    const [row] = await db.sql<{ hash: string }>('SELECT hash FROM steward.access_tokens WHERE id = $1', [id]);
    assert.match(row?.hash ?? '', /^scrypt\$/);
    assert.ok(!(row?.hash ?? '').includes(token.slice(-20)));

    // A role raised through one process is what the other grants.
    assert.equal((await apiCall(b.url, 'GET', '/api/roles', undefined, token)).status, 403);
    assert.equal((await apiCall(a.url, 'PUT', '/api/roles/viewer', { admin: true }, ADMIN)).status, 200);
    await until(
      'the other process to take the changed role',
      async () => (await apiCall(b.url, 'GET', '/api/roles', undefined, token)).status === 200,
      3000,
      50,
    );

    assert.equal((await apiCall(a.url, 'DELETE', `/api/tokens/${id}`, undefined, ADMIN)).status, 200);
    await until(
      'the other process to refuse the revoked token',
      async () => (await apiCall(b.url, 'GET', '/api/whoami', undefined, token)).status === 401,
      3000,
      50,
    );
  });
});
