import assert from 'node:assert/strict';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { HISTORY_FILE } from '../src/storage/sqlite-versions.js';
import { steward } from './support/cli.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, differingPixels } from './support/png.js';
import { ows, withSortedAttributes } from './support/qgis.js';
import { type Stack, startStack } from './support/stack.js';
import { type StorageKind } from './support/test-storage.js';
import { fillStyle, polygonLayer } from './support/write-bodies.js';

interface Version {
  id: string;
  time: string;
  who: string;
  route: string;
  summary: string;
}

/** What a version was, read when it was the newest: the stored file, the styles, and QGIS Server's answers. */
interface State {
  version: Version;
  xml: string;
  styles: Record<string, string | undefined>;
  capabilities: string;
  map: Buffer | undefined;
}

const PROJECT = 'chronicle';
const STYLES = ['red', 'blue'];

function historySuite(kind: StorageKind): void {
  describe(`project versions in ${kind} storage`, () => {
    let stack: Stack;
    let fixtures: Fixtures;
    const states: State[] = [];

    const call = (method: string, path: string, body?: unknown) => stack.call(method, path, body);
    const mapParameter = (): string =>
      kind === 'filesystem'
        ? join(stack.projectsDir, PROJECT, `${PROJECT}.qgs`)
        : `postgresql:?service=${stack.storage.config.psqlService ?? ''}&schema=public&project=${PROJECT}`;

    async function versions(project = PROJECT, query = ''): Promise<{ versions: Version[]; next: string | null }> {
      const reply = await call('GET', `/api/projects/${project}/versions${query}`);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      return reply.body as { versions: Version[]; next: string | null };
    }

    async function capabilities(): Promise<string> {
      const reply = await ows(stack.qgis, mapParameter(), {
        SERVICE: 'WMS',
        VERSION: '1.3.0',
        REQUEST: 'GetCapabilities',
      });
      assert.equal(reply.status, 200);
      return withSortedAttributes(await reply.text());
    }

    async function districtsMap(xml: string): Promise<Buffer | undefined> {
      if (!xml.includes('<layername>districts</layername>')) return undefined;
      const reply = await fetch(`${stack.api.url}/api/projects/${PROJECT}/layers/districts/map`);
      assert.equal(reply.status, 200);
      return Buffer.from(await reply.arrayBuffer());
    }

    /** Reads what the newest version is, after a write that made one. */
    async function snapshot(summary: string): Promise<void> {
      const [version] = (await versions()).versions;
      assert.ok(version);
      assert.equal(version.summary, summary);
      const xml = await stack.storage.projectXml(PROJECT);
      const styles = Object.fromEntries(
        await Promise.all(STYLES.map(async (name) => [name, await stack.storage.styleQml(PROJECT, name)] as const)),
      );
      states.push({ version, xml, styles, capabilities: await capabilities(), map: await districtsMap(xml) });
    }

    async function write(method: string, path: string, body: unknown, summary: string, status = 200): Promise<void> {
      const reply = await call(method, `/api/projects/${PROJECT}${path}`, body);
      assert.equal(reply.status, status, JSON.stringify(reply.body));
      await snapshot(summary);
    }

    before(async () => {
      fixtures = makeFixtures();
      stack = await startStack({}, {}, kind);
    });
    after(async () => {
      await stack.stop();
      rmSync(fixtures.dir, { recursive: true, force: true });
    });

    it('records every kind of write as a version with who, route and summary', async () => {
      assert.equal((await call('POST', '/api/projects', { name: PROJECT, author: 'Ada' })).status, 201);
      await snapshot('created the project');
      await write('POST', '/layers', polygonLayer('districts', fixtures.geopackage), 'added layer districts', 201);
      const roads = { type: 'vector', name: 'roads', datasource: `${fixtures.geopackage}|layername=lines` };
      await write('POST', '/layers', roads, 'added layer roads', 201);
      await write('POST', '/styles/red', fillStyle('red', '#ff0000'), 'added style red', 201);
      await write('POST', '/layers/districts/style', { name: 'red', current: true }, 'style of districts → red');
      await write(
        'PATCH',
        '',
        { title: 'Chronicle', wms_title: 'Chronicle WMS' },
        "changed the project's title, wms_title",
      );
      await write('POST', '/styles/blue', fillStyle('blue', '#0000ff'), 'added style blue', 201);
      const blueQml = (await call('GET', `/api/projects/${PROJECT}/styles/blue/qml`)).body as string;
      const replaced = await fetch(`${stack.api.url}/api/projects/${PROJECT}/styles/red/qml`, {
        method: 'PUT',
        headers: { 'content-type': 'application/xml' },
        body: blueQml,
      });
      assert.equal(replaced.status, 200, await replaced.text());
      await snapshot('replaced style red');
      await write('DELETE', '/styles/blue', undefined, 'removed style blue');
      await write('DELETE', '/layers/roads', undefined, 'removed layer roads');
      await write('PATCH', '/layers/districts', { title: 'Districts' }, 'changed title of layer districts');

      const listed = (await versions()).versions;
      assert.deepEqual(
        listed.map((version) => version.id),
        [...states].reverse().map((state) => state.version.id),
        'newest first, one per write',
      );
      const layer = states[1]?.version;
      assert.equal(layer?.who, '127.0.0.1');
      assert.equal(layer?.route, 'POST /api/projects/:project/layers');
      assert.ok(Date.parse(layer?.time ?? '') > Date.now() - 600_000);
      assert.ok(
        new Set(states.map((state) => state.map?.toString('base64'))).size >= 3,
        'the map changed along the way',
      );
    });

    it('pages the list with next', async () => {
      const first = await versions(PROJECT, '?limit=4');
      assert.equal(first.versions.length, 4);
      assert.equal(first.next, first.versions.at(-1)?.id);
      const second = await versions(PROJECT, `?limit=4&before=${first.next ?? ''}`);
      assert.equal(Number(second.versions[0]?.id), Number(first.next) - 1);
    });

    it('answers each version as the file was, byte for byte', async () => {
      for (const state of states) {
        const reply = await fetch(`${stack.api.url}/api/projects/${PROJECT}/versions/${state.version.id}`);
        assert.equal(reply.status, 200);
        assert.equal(await reply.text(), state.xml, `version ${state.version.id} (${state.version.summary})`);
      }
    });

    it('tells the difference between versions: layers, styles, settings and the text', async () => {
      const diff = async (from: State | undefined, to: State | undefined) => {
        const reply = await call(
          'GET',
          `/api/projects/${PROJECT}/versions/${from?.version.id}/diff?to=${to?.version.id}`,
        );
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        return reply.body as {
          layers: {
            added: string[];
            removed: string[];
            changed: { name: string; properties: string[]; styles: string[] }[];
          };
          tree: boolean;
          settings: string[];
          styles: { added: string[]; removed: string[]; changed: string[] };
          text: string;
        };
      };
      const added = await diff(states[1], states[2]);
      assert.deepEqual(added.layers, { added: ['roads'], removed: [], changed: [] });
      assert.equal(added.tree, true);
      assert.match(added.text, /^\+.*<layername>roads<\/layername>$/m);
      const styled = await diff(states[3], states[4]);
      assert.deepEqual(
        styled.layers.changed.map((change) => change.name),
        ['districts'],
      );
      assert.ok(styled.layers.changed[0]?.styles.includes('red'), JSON.stringify(styled.layers.changed));
      const settings = await diff(states[4], states[5]);
      assert.ok(settings.settings.includes('title'), JSON.stringify(settings.settings));
      assert.deepEqual(settings.layers.changed, []);
      const styles = await diff(states[5], states[7]);
      assert.deepEqual(styles.styles, { added: ['blue'], removed: [], changed: ['red'] });
      const same = await diff(states[3], states[3]);
      assert.equal(same.text, '');
    });

    it('restores each version as a new one: the file, styles, capabilities and map as they were', async () => {
      for (const state of states) {
        const reply = await call('POST', `/api/projects/${PROJECT}/versions/${state.version.id}/restore`);
        assert.equal(reply.status, 200, JSON.stringify(reply.body));
        const restored = reply.body as Version;
        assert.equal(restored.summary, `restored version ${state.version.id}`);
        assert.equal((await versions()).versions[0]?.id, restored.id);
        const label = `version ${state.version.id} (${state.version.summary})`;
        const xml = await stack.storage.projectXml(PROJECT);
        assert.equal(xml, state.xml, label);
        for (const name of STYLES)
          assert.equal(await stack.storage.styleQml(PROJECT, name), state.styles[name], `${label}: ${name}`);
        assert.equal(await capabilities(), state.capabilities, label);
        const map = await districtsMap(xml);
        if (!state.map || !map) assert.equal(map, state.map, label);
        else assert.equal(differingPixels(decodePng(map), decodePng(state.map)), 0, label);
      }
    });

    it('answers 404 for unknown versions and projects', async () => {
      for (const path of [
        `/api/projects/${PROJECT}/versions/99999`,
        `/api/projects/${PROJECT}/versions/abc`,
        `/api/projects/${PROJECT}/versions/0`,
        `/api/projects/${PROJECT}/versions/1/diff?to=99999`,
        '/api/projects/nowhere/versions',
        '/api/projects/nowhere/versions/1',
      ]) {
        const reply = await call('GET', path);
        assert.equal(reply.status, 404, path);
        assert.equal(typeof (reply.body as { error: unknown }).error, 'string');
      }
      const restore = await call('POST', `/api/projects/${PROJECT}/versions/99999/restore`);
      assert.equal(restore.status, 404);
      assert.equal((await call('GET', `/api/projects/${PROJECT}/versions/1/diff`)).status, 400);
    });

    it('refuses to restore a version whose data files are gone, naming the layers, unless forced', async () => {
      const copy = join(fixtures.dir, 'gone.gpkg');
      copyFileSync(fixtures.geopackage, copy);
      await write('POST', '/layers', polygonLayer('parcels', copy), 'added layer parcels', 201);
      const withParcels = states.at(-1) as State;
      await write('DELETE', '/layers/parcels', undefined, 'removed layer parcels');
      rmSync(copy);
      const path = `/api/projects/${PROJECT}/versions/${withParcels.version.id}/restore`;
      const before = (await versions()).versions[0]?.id;
      const refused = await call('POST', path);
      assert.equal(refused.status, 409);
      assert.match((refused.body as { error: string }).error, /"parcels"/);
      assert.equal((await versions()).versions[0]?.id, before, 'nothing written');
      const forced = await call('POST', `${path}?force=true`);
      assert.equal(forced.status, 200, JSON.stringify(forced.body));
      assert.equal(await stack.storage.projectXml(PROJECT), withParcels.xml);
    });

    it('serializes restores racing writes: each makes a whole version', async () => {
      const target = states[2] as State;
      const replies = await Promise.all([
        call('POST', `/api/projects/${PROJECT}/versions/${target.version.id}/restore`),
        call('PATCH', `/api/projects/${PROJECT}`, { abstract: 'raced' }),
        call('POST', `/api/projects/${PROJECT}/versions/${target.version.id}/restore`),
      ]);
      assert.deepEqual(
        replies.map((reply) => reply.status),
        [200, 200, 200],
      );
      const [newest] = (await versions()).versions;
      const stored = await stack.storage.projectXml(PROJECT);
      const reply = await fetch(`${stack.api.url}/api/projects/${PROJECT}/versions/${newest?.id}`);
      assert.equal(await reply.text(), stored, 'the newest version is the stored project');
    });

    /** Restores the version of `state`, and checks the stored file and QGIS Server's capabilities are as they were. */
    async function restoredAsItWas(state: State): Promise<void> {
      const reply = await call('POST', `/api/projects/${PROJECT}/versions/${state.version.id}/restore`);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      const label = `version ${state.version.id} (${state.version.summary})`;
      assert.equal(await stack.storage.projectXml(PROJECT), state.xml, label);
      assert.equal(await capabilities(), state.capabilities, label);
    }

    /** Checks that the version with layer parcels, whose data file is gone, is refused. */
    async function parcelsRefused(): Promise<void> {
      const parcels = states.find((state) => state.xml.includes('<layername>parcels</layername>')) as State;
      const refused = await call('POST', `/api/projects/${PROJECT}/versions/${parcels.version.id}/restore`);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.match((refused.body as { error: string }).error, /"parcels"/);
    }

    /** A stopped API has closed the history file: SQLite then folds its write-ahead log in and removes it. */
    async function historyClosed(): Promise<void> {
      if (kind === 'filesystem') assert.equal(existsSync(join(stack.projectsDir, `${HISTORY_FILE}-wal`)), false);
    }

    it('restores versions rebuilt from their chains by an API started since, checking their layers', async () => {
      await stack.restartApi(historyClosed);
      await restoredAsItWas(states[2] as State);
      await restoredAsItWas(states[5] as State);
      await stack.restartApi();
      await parcelsRefused();
    });

    it('restores versions stored before versions kept their layers, reading the layers out of the file', async () => {
      await stack.restartApi(() => stack.storage.dropVersionLayers());
      await parcelsRefused();
      await restoredAsItWas(states[3] as State);
      await restoredAsItWas(states[1] as State);
    });

    it('lists and restores versions with steward history and steward restore', async () => {
      const env = { STEWARD_SERVER_URL: stack.api.url };
      const listed = await steward(['history', PROJECT, '--limit', '3'], env);
      assert.equal(listed.code, 0, listed.err);
      const [newest] = (await versions()).versions;
      const row = listed.out.split('\n').find((line) => line.startsWith(`${newest?.id} `));
      assert.ok(row?.includes('127.0.0.1') && row.includes(newest?.summary ?? '-'), listed.out);
      assert.match(listed.out, /Older versions: steward history chronicle --before \d+/);
      const target = states[1] as State;
      const restored = await steward(['restore', PROJECT, target.version.id, '--json'], env);
      assert.equal(restored.code, 0, restored.err);
      assert.equal((JSON.parse(restored.out) as Version).summary, `restored version ${target.version.id}`);
      assert.equal(await stack.storage.projectXml(PROJECT), target.xml);
      const unknown = await steward(['restore', PROJECT, '99999'], env);
      assert.equal(unknown.code, 1);
      assert.match(unknown.err, /has no version "99999"/);
    });

    it('removes the versions with their project', async () => {
      assert.equal((await call('DELETE', `/api/projects/${PROJECT}`)).status, 200);
      assert.equal((await call('POST', '/api/projects', { name: PROJECT, author: 'Ada' })).status, 201);
      const listed = (await versions()).versions;
      assert.deepEqual(
        listed.map((version) => [version.id, version.summary]),
        [['1', 'created the project']],
      );
    });
  });
}

historySuite('filesystem');
historySuite('postgresql');

describe('retention of versions', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ history: { versions: 4, days: 90 } }, {}, 'filesystem');
  });
  after(() => stack.stop());

  it('keeps the newest versions, by whole chains, and every kept one restores', async () => {
    await stack.call('POST', '/api/projects', { name: 'kept', author: 'Ada' });
    for (let index = 0; index < 20; index++) {
      assert.equal((await stack.call('PATCH', '/api/projects/kept', { abstract: `edit ${index}` })).status, 200);
    }
    const { versions } = (await stack.call('GET', '/api/projects/kept/versions')).body as { versions: Version[] };
    assert.ok(versions.length >= 4 && versions.length < 8, `${versions.length} versions kept`);
    assert.equal(versions[0]?.id, '21');
    const oldest = versions.at(-1) as Version;
    const content = await fetch(`${stack.api.url}/api/projects/kept/versions/${oldest.id}`);
    assert.equal(content.status, 200);
    const edit = Number(oldest.id) - 2;
    assert.match(await content.text(), new RegExp(`edit ${edit}<`));
  });
});

describe('a version that cannot be stored after its write', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({}, {}, 'filesystem');
  });
  after(() => stack.stop());

  const summaries = async (): Promise<string[]> => {
    const reply = await stack.call('GET', '/api/projects/owed/versions');
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return (reply.body as { versions: Version[] }).versions.map((version) => version.summary);
  };

  it('lets the write stand and records its version, as told, at the next write', async () => {
    assert.equal((await stack.call('POST', '/api/projects', { name: 'owed', author: 'Ada' })).status, 201);
    // Another connection holding the history file's write lock: the API's insert waits, then fails.
    const blocker = new Database(join(stack.projectsDir, HISTORY_FILE));
    blocker.exec('BEGIN IMMEDIATE');
    let written: string;
    try {
      const reply = await stack.call('PATCH', '/api/projects/owed', { abstract: 'kept without its version' });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      written = await stack.storage.projectXml('owed');
      assert.match(written, /kept without its version/);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    assert.deepEqual(await summaries(), ['created the project'], 'the version is not stored yet');

    assert.equal((await stack.call('PATCH', '/api/projects/owed', { abstract: 'the next write' })).status, 200);
    const reply = await stack.call('GET', '/api/projects/owed/versions');
    const [next, owed] = (reply.body as { versions: Version[] }).versions;
    assert.deepEqual(await summaries(), [
      "changed the project's abstract",
      "changed the project's abstract",
      'created the project',
    ]);
    assert.equal(owed?.who, '127.0.0.1');
    assert.equal(owed?.route, 'PATCH /api/projects/:project');
    assert.ok(owed && next && Date.parse(owed.time) <= Date.parse(next.time));
    const content = await fetch(`${stack.api.url}/api/projects/owed/versions/${owed?.id ?? ''}`);
    assert.equal(Buffer.from(await content.arrayBuffer()).toString('utf8'), written);
  });
});

describe('who made a version, with API tokens', () => {
  const ADMIN = 'the history bootstrap token';
  let stack: Stack;
  const as = (token: string) => (method: string, path: string, body?: unknown) =>
    apiCall(stack.api.url, method, path, body, token);
  before(async () => {
    stack = await startStack({ apiToken: ADMIN }, {}, 'filesystem');
  });
  after(() => stack.stop());

  it("tells the token's name rather than the client's address", async () => {
    const admin = as(ADMIN);
    assert.equal((await admin('POST', '/api/projects', { name: 'signed', author: 'Ada' })).status, 201);
    const role = await admin('PUT', '/api/roles/editor', { projects: { signed: { access: 'write' } } });
    assert.equal(role.status, 201, JSON.stringify(role.body));
    const made = await admin('POST', '/api/tokens', { name: 'ada', roles: ['editor'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const ada = as((made.body as { token: string }).token);
    assert.equal((await ada('PATCH', '/api/projects/signed', { abstract: 'by Ada' })).status, 200);
    const listed = await ada('GET', '/api/projects/signed/versions');
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.deepEqual(
      (listed.body as { versions: Version[] }).versions.map(({ who, summary }) => [who, summary]),
      [
        ['ada', "changed the project's abstract"],
        ['bootstrap', 'created the project'],
      ],
    );
  });
});
