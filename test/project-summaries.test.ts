/**
 * GET /api/project-summaries on both storages: every project's summary in one request, searched,
 * sorted and paged, filtered to what a token's roles read, with a project that cannot be read
 * listed with its error rather than failing the listing; each summary and each project's metadata
 * say what the token may do with it.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { type Stack, startStack } from './support/stack.js';
import { type StorageKind } from './support/test-storage.js';
import { polygonLayer } from './support/write-bodies.js';

const ADMIN = 'the summaries administrator token';

type Reply = { status: number; body: unknown };
interface Page {
  total: number;
  offset: number;
  limit: number;
  projects: Array<Record<string, unknown>>;
}

/** Projects with 0 to 3 layers and two authors; `river-2` has a title the search finds. */
const PROJECTS = [
  { name: 'river-1', author: 'Zoe', layers: 2 },
  { name: 'river-2', author: 'Ada', layers: 0 },
  { name: 'town', author: 'Ada', layers: 3 },
  { name: 'harbour', author: 'Mia', layers: 1 },
];

for (const kind of ['filesystem', 'postgresql'] satisfies StorageKind[]) {
  describe(`project summaries (${kind})`, () => {
    let stack: Stack;
    const as = (token: string) => (method: string, path: string, body?: unknown) =>
      apiCall(stack.api.url, method, path, body, token);
    const admin = as(ADMIN);
    const ok = async (reply: Promise<Reply>, status: number): Promise<unknown> => {
      const { status: got, body } = await reply;
      assert.equal(got, status, JSON.stringify(body));
      return body;
    };
    const page = async (query: string, token = ADMIN): Promise<Page> =>
      (await ok(as(token)('GET', `/api/project-summaries${query}`), 200)) as Page;
    const names = (listed: Page): unknown[] => listed.projects.map((project) => project.name);

    before(async () => {
      const fixtures = makeFixtures();
      stack = await startStack({ apiToken: ADMIN, tokenFailures: 100 }, {}, kind, 'development');
      for (const project of PROJECTS) {
        await ok(admin('POST', '/api/projects', { name: project.name, author: project.author }), 201);
        for (let index = 0; index < project.layers; index++)
          await ok(
            admin('POST', `/api/projects/${project.name}/layers`, polygonLayer(`l${index}`, fixtures.geopackage)),
            201,
          );
      }
      await ok(admin('PATCH', '/api/projects/river-2', { title: 'Estuary survey' }), 200);
      await ok(admin('PUT', '/api/projects/town/pin'), 200);
    });
    after(() => stack.stop());

    it('summarizes every project in one request, as the per-project routes describe them', async () => {
      const listed = await page('');
      assert.equal(listed.total, PROJECTS.length);
      assert.deepEqual(names(listed), ['harbour', 'river-1', 'river-2', 'town']);
      for (const summary of listed.projects) {
        const name = String(summary.name);
        const info = (await ok(admin('GET', `/api/projects/${name}`), 200)) as Record<string, unknown>;
        const layers = (await ok(admin('GET', `/api/projects/${name}/layers`), 200)) as string[];
        assert.deepEqual(summary, {
          name,
          title: info.title,
          storage: kind,
          ...(kind === 'postgresql' ? { schema: 'public' } : {}),
          layers: layers.length,
          crs: info.crs,
          author: info.author,
          pinned: info.pinned,
          access: 'admin',
        });
        assert.equal(info.access, 'admin', 'the bootstrap administrator administers every project');
      }
      assert.equal(listed.projects.find((summary) => summary.name === 'town')?.pinned, true);
      assert.deepEqual(await ok(admin('GET', '/api/projects'), 200), ['harbour', 'river-1', 'river-2', 'town']);
    });

    it('searches names and titles, sorts and pages', async () => {
      assert.deepEqual(names(await page('?q=RIVER')), ['river-1', 'river-2']);
      assert.deepEqual(names(await page('?q=estuary')), ['river-2']);
      assert.deepEqual(await page('?q=nothing'), { total: 0, offset: 0, limit: 50, projects: [] });
      assert.deepEqual(names(await page('?sort=layers&order=desc')), ['town', 'river-1', 'harbour', 'river-2']);
      assert.deepEqual(names(await page('?sort=author')), ['river-2', 'town', 'harbour', 'river-1']);
      const second = await page('?sort=layers&limit=2&offset=2');
      assert.deepEqual(
        { ...second, projects: names(second) },
        {
          total: 4,
          offset: 2,
          limit: 2,
          projects: ['river-1', 'town'],
        },
      );
      assert.deepEqual(names(await page('?offset=10')), []);
      const byName = await page('?order=desc&limit=2&offset=1');
      assert.deepEqual(
        { total: byName.total, projects: names(byName) },
        { total: 4, projects: ['river-2', 'river-1'] },
      );
    });

    it('refuses bad parameters with 400 and a system schema with 403', async () => {
      for (const query of ['?limit=0', '?limit=201', '?limit=ten', '?offset=-1', '?sort=title', '?order=up'])
        assert.match(
          String(((await ok(admin('GET', `/api/project-summaries${query}`), 400)) as { error: string }).error),
          /./,
          query,
        );
      await ok(admin('GET', '/api/project-summaries?schema=pg_catalog'), 403);
    });

    it('lists only what the token reads, and only the layers it sees', async () => {
      const role = { projects: { town: { access: 'read', layers: { l0: { read: false } } } } };
      await ok(admin('PUT', '/api/roles/town-reader', role), 201);
      const made = (await ok(admin('POST', '/api/tokens', { name: 'reader', roles: ['town-reader'] }), 201)) as {
        token: string;
      };
      const listed = await page('', made.token);
      assert.equal(listed.total, 1);
      assert.deepEqual(names(listed), ['town']);
      assert.equal(listed.projects[0]?.layers, 2, 'the hidden layer is not counted');
      assert.equal((await page('?q=river', made.token)).total, 0);
      assert.equal((await apiCall(stack.api.url, 'GET', '/api/project-summaries')).status, 401);
    });

    it("says what the token's roles may do with each project, the most any of them grants", async () => {
      const grants = { 'river-1': { access: 'write' }, town: { access: 'read' }, harbour: { access: 'admin' } };
      await ok(admin('PUT', '/api/roles/mixed', { projects: grants }), 201);
      await ok(admin('PUT', '/api/roles/town-writer', { projects: { town: { access: 'write' } } }), 201);
      const token = async (roles: string[]): Promise<string> =>
        ((await ok(admin('POST', '/api/tokens', { name: roles.join('+'), roles }), 201)) as { token: string }).token;
      const mixed = await token(['mixed']);
      const both = await token(['mixed', 'town-writer']);
      const expected = { harbour: 'admin', 'river-1': 'write', town: 'read' };
      for (const [who, wanted] of [
        [mixed, expected],
        [both, { ...expected, town: 'write' }],
      ] as const) {
        const listed = await page('', who);
        assert.deepEqual(Object.fromEntries(listed.projects.map((summary) => [summary.name, summary.access])), wanted);
        for (const [name, access] of Object.entries(wanted))
          assert.equal(((await ok(as(who)('GET', `/api/projects/${name}`), 200)) as { access: string }).access, access);
      }
      const patched = (await ok(as(mixed)('PATCH', '/api/projects/river-1', { abstract: 'x' }), 200)) as {
        access: string;
      };
      assert.equal(patched.access, 'write');
      await ok(as(mixed)('GET', '/api/projects/river-2'), 404);
    });

    if (kind === 'filesystem')
      it('lists a project that cannot be read with its error', async () => {
        await ok(admin('POST', '/api/projects', { name: 'broken', author: 'Ada' }), 201);
        writeFileSync(join(stack.projectsDir, 'broken', 'broken.qgs'), '<qgis><unclosed');
        const listed = await page('?q=broken');
        assert.equal(listed.total, 1);
        const [broken] = listed.projects;
        assert.equal(broken?.layers, undefined);
        assert.match(String(broken?.error), /./);
        assert.equal((await page('')).total, PROJECTS.length + 1, 'the others are listed as well');
      });
  });
}
