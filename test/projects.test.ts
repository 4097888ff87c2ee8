import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { after, before, describe, it } from './support/node-test.js';
import { ows, publishedLayers } from './support/qgis.js';
import { type Stack, startStack } from './support/stack.js';

describe('projects on the filesystem', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  it('creates a project that lists, describes itself and loads in QGIS Server', async () => {
    assert.deepEqual(await stack.call('POST', '/api/projects/', { name: 'alpha', author: 'Ada' }), {
      status: 201,
      body: true,
    });
    assert.deepEqual((await stack.call('GET', '/api/projects/')).body, ['alpha']);
    const info = await stack.call('GET', '/api/projects/alpha');
    assert.equal(info.status, 200);
    const body = info.body as Record<string, string>;
    assert.equal(body['author'], 'Ada');
    assert.equal(body['crs'], 'EPSG:3857');
    assert.equal(body['storage'], 'filesystem');
    assert.equal(body['cache'], 'disabled');
    assert.equal(body['access'], 'admin', 'without access control everyone administers every project');
    const listed = (await stack.call('GET', '/api/project-summaries')).body as { projects: Array<{ access: string }> };
    assert.deepEqual(
      listed.projects.map((summary) => summary.access),
      ['admin'],
    );
    assert.match(body['creation_datetime'] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    assert.ok(existsSync(join(stack.projectsDir, 'alpha', 'steward.db')), 'the internal database is created');
    assert.deepEqual(await publishedLayers(stack.qgis, join(stack.projectsDir, 'alpha', 'alpha.qgs')), []);
  });

  it('changes the metadata, which QGIS Server then serves in its capabilities', async () => {
    await stack.call('POST', '/api/projects', { name: 'described', author: 'Ada' });
    const change = {
      title: 'Rivers & lakes',
      abstract: 'Water <bodies>\nof the region',
      author: 'Grace',
      wms_title: 'Hydrography service',
      wms_abstract: 'Rivers and lakes, daily',
    };
    const changed = await stack.call('PATCH', '/api/projects/described', change);
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.deepEqual((await stack.call('GET', '/api/projects/described')).body, changed.body);
    assert.deepEqual(
      Object.fromEntries(Object.keys(change).map((key) => [key, (changed.body as Record<string, string>)[key]])),
      change,
    );
    const map = join(stack.projectsDir, 'described', 'described.qgs');
    const capabilities = await (
      await ows(stack.qgis, map, { SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' })
    ).text();
    const service = capabilities.slice(capabilities.indexOf('<Service>'), capabilities.indexOf('</Service>'));
    assert.match(service, /<Title>Hydrography service<\/Title>/);
    assert.match(service, /<Abstract>(<!\[CDATA\[)?Rivers and lakes, daily(\]\]>)?<\/Abstract>/);

    const title = await stack.call('PATCH', '/api/projects/described', { title: 'Rivers' });
    assert.equal((title.body as Record<string, string>)['title'], 'Rivers');
    assert.equal((title.body as Record<string, string>)['author'], 'Grace', 'fields not named stay');
  });

  it('refuses a metadata change it cannot make, and keeps the project as it was', async () => {
    await stack.call('POST', '/api/projects', { name: 'kept', author: 'Ada' });
    const before = (await stack.call('GET', '/api/projects/kept')).body;
    const cases: Array<[unknown, number]> = [
      [{}, 400],
      [{ colour: 'red' }, 400],
      [{ author: '' }, 400],
      [{ author: '   ' }, 400],
      [{ title: 5 }, 400],
      [{ abstract: 'a\u0001b' }, 400],
      [[], 400],
    ];
    for (const [body, status] of cases) {
      const reply = await stack.call('PATCH', '/api/projects/kept', body);
      assert.equal(reply.status, status, JSON.stringify(body));
      assert.equal(typeof (reply.body as { error: unknown }).error, 'string');
    }
    assert.equal((await stack.call('PATCH', '/api/projects/missing', { title: 'x' })).status, 404);
    assert.deepEqual((await stack.call('GET', '/api/projects/kept')).body, before);
  });

  it('deletes everything of a project', async () => {
    await stack.call('POST', '/api/projects', { name: 'doomed', author: 'Ada' });
    assert.deepEqual(await stack.call('DELETE', '/api/projects/doomed'), { status: 200, body: true });
    assert.ok(!((await stack.call('GET', '/api/projects')).body as string[]).includes('doomed'));
    assert.ok(!existsSync(join(stack.projectsDir, 'doomed')));
    assert.deepEqual(
      readdirSync(stack.projectsDir).filter((entry) => entry.includes('doomed')),
      [],
    );
    assert.equal((await stack.call('GET', '/api/projects/doomed')).status, 404);
  });

  describe('bad requests change nothing', () => {
    const cases: Array<[string, unknown, number]> = [
      ['a missing author', { name: 'p' }, 400],
      ['a name of the wrong type', { name: 5, author: 'a' }, 400],
      ['an unknown member', { name: 'p', author: 'a', colour: 'red' }, 400],
      ['a name with a slash', { name: 'a/b', author: 'a' }, 400],
      ['a name with ..', { name: '..', author: 'a' }, 400],
      ['a name with a backslash', { name: 'a\\b', author: 'a' }, 400],
      ['a name with a control character', { name: 'a\u0001b', author: 'a' }, 400],
      ['a name starting with a dot', { name: '.hidden', author: 'a' }, 400],
      ['a name over 255 bytes', { name: 'é'.repeat(200), author: 'a' }, 400],
    ];
    for (const [situation, body, status] of cases) {
      it(`answers ${status} to ${situation}`, async () => {
        const before = readdirSync(stack.projectsDir).sort();
        const reply = await stack.call('POST', '/api/projects/', body);
        assert.equal(reply.status, status);
        assert.equal(typeof (reply.body as { error: unknown }).error, 'string');
        assert.deepEqual(readdirSync(stack.projectsDir).sort(), before);
      });
    }

    it('answers 409 to a duplicate name and keeps the first project', async () => {
      await stack.call('POST', '/api/projects/', { name: 'twice', author: 'first' });
      const reply = await stack.call('POST', '/api/projects/', { name: 'twice', author: 'second' });
      assert.equal(reply.status, 409);
      assert.equal(((await stack.call('GET', '/api/projects/twice')).body as { author: string }).author, 'first');
    });

    it('answers 415 to a body that is not JSON', async () => {
      const response = await fetch(`${stack.api.url}/api/projects/`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'name=x',
      });
      assert.equal(response.status, 415);
      assert.equal(typeof ((await response.json()) as { error: unknown }).error, 'string');
    });

    it('answers 400 to malformed JSON', async () => {
      const response = await fetch(`${stack.api.url}/api/projects/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"name": ',
      });
      assert.equal(response.status, 400);
    });

    it('answers 404 for an unknown project and an unknown route', async () => {
      assert.equal((await stack.call('GET', '/api/projects/nothing')).status, 404);
      assert.equal((await stack.call('DELETE', '/api/projects/nothing')).status, 404);
      assert.equal((await stack.call('GET', '/api/nothing')).status, 404);
    });

    it('answers 400 for a path name with ..', async () => {
      assert.equal((await stack.call('GET', '/api/projects/..%2Fetc')).status, 400);
      assert.equal((await stack.call('DELETE', '/api/projects/a..b')).status, 400);
    });
  });

  it('describes every route in OpenAPI and serves the reader', async () => {
    const description = (await stack.call('GET', '/api/openapi.json')).body as { paths: Record<string, unknown> };
    assert.ok(description.paths['/api/projects/{project}/layers/{layer}/map']);
    assert.ok(description.paths['/api/projects']);
    const docs = await fetch(`${stack.api.url}/docs/`);
    assert.equal(docs.status, 200);
  });
});
