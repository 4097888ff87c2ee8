/**
 * The audit log on real HTTP: every change made through the API (successes, refusals and failures)
 * is kept with who made it, the route, the project and the status, reads and unidentified requests
 * are not, and `GET /api/audit` filters by project, identity, time and count; with projects in a
 * folder, and with two API processes on one database, which share one log.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type AuditEntry } from '../src/access/records.js';
import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { type ApiProcess, startApiProcess } from './support/api-process.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { startTestDatabase, type TestDatabase } from './support/postgres.js';
import { waitFor } from './support/wait.js';

const ADMIN = 'the bootstrap administrator token of the audit test';
const NO_QGIS = 'http://127.0.0.1:9/ows/';

type Reply = { status: number; body: unknown };

/** What a test compares of an entry: all but the time and the token's id. */
type Seen = Pick<AuditEntry, 'who' | 'method' | 'route' | 'path' | 'project' | 'schema' | 'status'>;

function seen({ who, method, route, path, project, schema, status }: AuditEntry): Seen {
  return { who, method, route, path, project, schema, status };
}

/** The audit log as `query` filters it, once it holds at least `count` entries (they are kept after the reply). */
async function auditOf(url: string, query: string, count: number): Promise<AuditEntry[]> {
  return waitFor(
    `${count} audit entries for ${query}`,
    async () => {
      const reply = await apiCall(url, 'GET', `/api/audit${query}`, undefined, ADMIN);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      const entries = reply.body as AuditEntry[];
      return entries.length >= count && entries;
    },
    5000,
  );
}

describe('the audit log of one API, projects in a folder', () => {
  let api: RunningServer;
  let projectsDir = '';
  let editor = '';
  let editorId = '';
  const as =
    (token: string | undefined) =>
    (method: string, path: string, body?: unknown): Promise<Reply> =>
      apiCall(api.url, method, path, body, token);
  const admin = as(ADMIN);
  const expect = async (reply: Promise<Reply>, status: number): Promise<unknown> => {
    const { status: got, body } = await reply;
    assert.equal(got, status, JSON.stringify(body));
    return body;
  };

  before(async () => {
    projectsDir = mkdtempSync(join(tmpdir(), 'steward-audit-'));
    api = await startServer(
      loadConfig({
        STEWARD_QGISSERVER_URL: NO_QGIS,
        STEWARD_QGISSERVER_VERSION: '3.22',
        STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
        STEWARD_API_TOKEN: ADMIN,
        STEWARD_LOGLEVEL: 'ERROR',
        STEWARD_LISTEN: '127.0.0.1:0',
      }),
    );
  });
  after(async () => {
    await api.close();
    rmSync(projectsDir, { recursive: true, force: true });
  });

  it('keeps each change with who, route, project and status; not reads, nor requests of no one', async () => {
    await expect(admin('PUT', '/api/roles/editor', { projects: { town: { access: 'write' } } }), 201);
    const made = (await expect(admin('POST', '/api/tokens', { name: 'ed', roles: ['editor'] }), 201)) as {
      id: string;
      token: string;
    };
    [editor, editorId] = [made.token, made.id];
    const ed = as(editor);
    await expect(admin('POST', '/api/projects', { name: 'town', author: 'a' }), 201);
    await expect(admin('POST', '/api/projects', { name: 'harbour', author: 'a', schema: 'public' }), 201);
    await expect(ed('PATCH', '/api/projects/town', { title: 'Town' }), 200);
    await expect(ed('PATCH', '/api/projects/town', { title: 42 }), 400);
    await expect(ed('DELETE', '/api/projects/town'), 403);
    await expect(ed('PATCH', '/api/projects/harbour', { title: 'mine' }), 404);
    // Reads, a route that does not exist, and requests refused before anyone is known are not kept.
    await expect(ed('GET', '/api/projects/town'), 200);
    await expect(ed('GET', '/api/audit'), 403);
    await expect(admin('POST', '/api/nowhere', {}), 404);
    await expect(as(undefined)('DELETE', '/api/projects/town'), 401);
    await expect(as(`${editor.slice(0, -4)}AAAA`)('DELETE', '/api/projects/town'), 401);

    const route = '/api/projects/:project';
    const expected: Seen[] = [
      { who: 'ed', method: 'PATCH', route, path: '/api/projects/harbour', project: 'harbour', status: 404 },
      { who: 'ed', method: 'DELETE', route, path: '/api/projects/town', project: 'town', status: 403 },
      { who: 'ed', method: 'PATCH', route, path: '/api/projects/town', project: 'town', status: 400 },
      { who: 'ed', method: 'PATCH', route, path: '/api/projects/town', project: 'town', status: 200 },
      {
        who: 'bootstrap',
        method: 'POST',
        route: '/api/projects',
        path: '/api/projects',
        project: 'harbour',
        status: 201,
      },
      { who: 'bootstrap', method: 'POST', route: '/api/projects', path: '/api/projects', project: 'town', status: 201 },
      { who: 'bootstrap', method: 'POST', route: '/api/tokens', path: '/api/tokens', project: null, status: 201 },
      {
        who: 'bootstrap',
        method: 'PUT',
        route: '/api/roles/:role',
        path: '/api/roles/editor',
        project: null,
        status: 201,
      },
    ].map((entry) => ({ ...entry, schema: entry.project === null ? null : 'public' }));
    const entries = await auditOf(api.url, '', expected.length);
    assert.deepEqual(entries.map(seen), expected);
    assert.deepEqual(
      entries.map((entry) => entry.token),
      [editorId, editorId, editorId, editorId, null, null, null, null],
    );
    const times = entries.map((entry) => Date.parse(entry.at));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      'newest first',
    );

    // Kept in the projects folder, one JSON line an entry, in a file of the day.
    const day = entries[0]?.at.slice(0, 10) ?? '';
    const lines = readFileSync(join(projectsDir, '.access', 'audit', `${day}.jsonl`), 'utf8')
      .trimEnd()
      .split('\n');
    assert.deepEqual(
      lines.map((line) => seen(JSON.parse(line) as AuditEntry)),
      [...expected].reverse(),
    );
  });

  it('filters by project, schema, identity, time and count', async () => {
    const all = await auditOf(api.url, '', 8);
    const town = await auditOf(api.url, '?project=town', 1);
    assert.deepEqual(
      town.map((entry) => [entry.method, entry.status]),
      [
        ['DELETE', 403],
        ['PATCH', 400],
        ['PATCH', 200],
        ['POST', 201],
      ],
    );
    assert.equal((await auditOf(api.url, '?project=town&schema=public', 4)).length, 4);
    assert.deepEqual(await auditOf(api.url, '?project=town&schema=other', 0), []);
    const byEd = await auditOf(api.url, '?who=ed', 1);
    assert.deepEqual(
      byEd.map((entry) => entry.status),
      [404, 403, 400, 200],
    );
    assert.deepEqual(await auditOf(api.url, '?who=ed&project=harbour', 1), all.slice(0, 1));
    assert.deepEqual(await auditOf(api.url, '?limit=3', 1), all.slice(0, 3));

    // since: at or after; until: before. Entries of one millisecond are kept apart by where they fall.
    const pivot = all[3]?.at ?? '';
    const since = await auditOf(api.url, `?since=${pivot}`, 1);
    const until = await auditOf(api.url, `?until=${pivot}`, 1);
    assert.ok(since.every((entry) => entry.at >= pivot));
    assert.ok(until.every((entry) => entry.at < pivot));
    assert.equal(since.length + until.length, all.length);
    assert.deepEqual(await auditOf(api.url, `?since=${pivot}&until=${pivot}`, 0), []);
    assert.deepEqual(await auditOf(api.url, '?since=2099-01-01T00:00:00Z', 0), []);
    assert.equal((await auditOf(api.url, '?until=2099-01-01T00:00:00%2B02:00', 8)).length, all.length);

    for (const query of ['?since=yesterday', '?limit=0', '?limit=10000', '?who=', '?extra=1']) {
      const reply = await admin('GET', `/api/audit${query}`);
      assert.equal(reply.status, 400, `${query}: ${JSON.stringify(reply.body)}`);
      assert.equal(typeof (reply.body as { error: unknown }).error, 'string');
    }
    // The filters' own reads are not kept.
    assert.equal((await auditOf(api.url, '', 0)).length, all.length);
  });

  it('keeps the revocation of a token under the name of who revoked it, and a revoked token no more', async () => {
    await expect(admin('DELETE', `/api/tokens/${editorId}`), 200);
    await expect(as(editor)('PATCH', '/api/projects/town', { title: 'again' }), 401);
    const [revoked] = await auditOf(api.url, '?limit=1', 1);
    assert.deepEqual(revoked && seen(revoked), {
      who: 'bootstrap',
      method: 'DELETE',
      route: '/api/tokens/:id',
      path: `/api/tokens/${editorId}`,
      project: null,
      schema: null,
      status: 200,
    });
    assert.equal((await auditOf(api.url, '', 9)).length, 9);
  });
});

describe('the audit log of two API processes on one database', () => {
  let db: TestDatabase;
  const apis: ApiProcess[] = [];

  before(async () => {
    db = await startTestDatabase();
    for (let index = 0; index < 2; index++) {
      apis.push(
        await startApiProcess({
          STEWARD_QGISSERVER_URL: NO_QGIS,
          STEWARD_QGISSERVER_PROJECTS_DIR: mkdtempSync(join(tmpdir(), 'steward-audit-')),
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

  it('is one log: what either process did, read from the other, with the same filters', async () => {
    const [a, b] = apis as [ApiProcess, ApiProcess];
    const call = (api: ApiProcess, method: string, path: string, body?: unknown) =>
      apiCall(api.url, method, path, body, ADMIN);
    assert.equal((await call(a, 'PUT', '/api/roles/viewer', { projects: { town: { access: 'read' } } })).status, 201);
    const made = await call(a, 'POST', '/api/tokens', { name: 'ci', roles: ['viewer'] });
    const { token } = made.body as { token: string };
    assert.equal((await call(b, 'POST', '/api/projects', { name: 'town', author: 'a', schema: 'fleet' })).status, 201);
    assert.equal((await apiCall(b.url, 'PATCH', '/api/projects/town?schema=fleet', { title: 'x' }, token)).status, 404);
    assert.equal((await call(a, 'PATCH', '/api/projects/town?schema=fleet', { title: 'Town' })).status, 200);

    const expected = [
      ['bootstrap', 'PATCH', 'town', 'fleet', 200],
      ['ci', 'PATCH', 'town', 'fleet', 404],
      ['bootstrap', 'POST', 'town', 'fleet', 201],
      ['bootstrap', 'POST', null, null, 201],
      ['bootstrap', 'PUT', null, null, 201],
    ];
    const row = (entry: AuditEntry) => [entry.who, entry.method, entry.project, entry.schema, entry.status];
    for (const api of apis) assert.deepEqual((await auditOf(api.url, '', 5)).map(row), expected);
    const inFleet = await auditOf(b.url, '?schema=fleet&project=town', 3);
    assert.deepEqual(inFleet.map(row), expected.slice(0, 3));
    assert.deepEqual((await auditOf(a.url, '?who=ci', 1)).map(row), expected.slice(1, 2));
    assert.deepEqual((await auditOf(a.url, '?limit=2', 2)).map(row), expected.slice(0, 2));
    const pivot = (await auditOf(a.url, '', 5))[2]?.at ?? '';
    assert.deepEqual((await auditOf(b.url, `?since=${pivot}`, 3)).map(row), expected.slice(0, 3));
    assert.deepEqual((await auditOf(b.url, `?until=${pivot}`, 2)).map(row), expected.slice(3));
    const [{ count } = { count: '' }] = await db.sql<{ count: string }>('SELECT count(*) FROM steward.audit');
    assert.equal(count, '5');
  });
});
