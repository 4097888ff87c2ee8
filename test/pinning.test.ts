/**
 * Pinned projects against real QGIS Servers with the plugin: pinned over the API (and the `steward`
 * command), a pinned project is loaded by the connected instances at once and by an instance as
 * soon as it connects; STEWARD_PINNED_PROJECTS pins besides; deleting a project takes its pin away
 * and renaming it outside Steward carries the pin along. With projects in PostgreSQL, two Steward
 * processes on one database agree on the pins, whichever of them an instance is connected to.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig, serviceFiles } from '../src/config.js';
import { type InstanceReload } from '../src/insight/project-fleet.js';
import type { InstanceProjects, InstanceStats } from '../src/monitor/protocol.js';
import { freePort } from '../src/runtime/ports.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { type Pin } from '../src/services/pins.js';
import { steward } from './support/cli.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { type InsightStack, PLUGIN_PATH, startInsightStack } from './support/insight-stack.js';
import { after, before, describe, it } from './support/node-test.js';
import { createParcels, startTestDatabase, type TestDatabase } from './support/postgres.js';
import { waitFor } from './support/wait.js';

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: unknown }>;

interface Pinned {
  pinned: boolean;
  instances: InstanceReload[];
}

/** The MAP values an instance holds in its cache. */
async function cachedMaps(call: Call, id: string): Promise<string[]> {
  const { status, body } = await call('GET', `/api/instances/${id}/projects`);
  assert.equal(status, 200, JSON.stringify(body));
  return (body as InstanceProjects).projects.map(({ map }) => map).sort();
}

async function pins(call: Call): Promise<Pin[]> {
  const { status, body } = await call('GET', '/api/pins');
  assert.equal(status, 200, JSON.stringify(body));
  return (body as { pins: Pin[] }).pins;
}

async function requestsServed(call: Call, id: string): Promise<number> {
  return ((await call('GET', `/api/instances/${id}/stats`)).body as InstanceStats).count;
}

describe('pinned projects in a projects folder', () => {
  let data: Fixtures;
  let stack: InsightStack;
  let first = '';
  let env: NodeJS.ProcessEnv;

  const call: Call = (method, path, body) => stack.call(method, path, body);
  const mapOf = (name: string) => join(stack.workDir, 'projects', name, `${name}.qgs`);
  const pinnedInfo = async (name: string) => ((await call('GET', `/api/projects/${name}`)).body as Pinned).pinned;

  async function createProject(name: string): Promise<void> {
    assert.equal((await call('POST', '/api/projects', { name, author: 'pins' })).status, 201);
    const layer = { type: 'vector', name: 'polygons', datasource: `${data.geopackage}|layername=polygons` };
    assert.equal((await call('POST', `/api/projects/${name}/layers`, layer)).status, 201);
  }

  before(async () => {
    data = makeFixtures();
    stack = await startInsightStack({ STEWARD_PINNED_PROJECTS: 'gamma' });
    env = { STEWARD_SERVER_URL: stack.api.url };
    for (const name of ['alpha', 'beta', 'gamma']) await createProject(name);
    ({ id: first } = await stack.startQgis({}, stack.qgisPort));
    await waitFor('the configured pin', async () => (await cachedMaps(call, first)).includes(mapOf('gamma')), 10_000);
  });

  after(async () => {
    await stack?.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('pins a project: the connected instance loads it at once, before any client asks', async () => {
    assert.equal(await pinnedInfo('alpha'), false);
    const { status, body } = await call('PUT', '/api/projects/alpha/pin');
    assert.equal(status, 200, JSON.stringify(body));
    const answer = body as Pinned;
    assert.equal(answer.pinned, true);
    assert.deepEqual(
      answer.instances.map(({ instance, status: outcome, project }) => [instance, outcome, project?.layers]),
      [[first, 'reloaded', 1]],
    );
    assert.deepEqual(await cachedMaps(call, first), [mapOf('alpha'), mapOf('gamma')]);
    assert.equal(await requestsServed(call, first), 0, 'no client asked for anything');
    assert.equal(await pinnedInfo('alpha'), true);
    assert.equal(await pinnedInfo('gamma'), true);
    assert.equal(await pinnedInfo('beta'), false);
    assert.deepEqual(await pins(call), [
      { project: 'alpha', schema: 'public', map: mapOf('alpha'), source: 'api' },
      { project: 'gamma', schema: 'public', map: mapOf('gamma'), source: 'environment' },
    ]);
  });

  it('has an instance that connects load every pinned project, and no unpinned one', async () => {
    assert.equal((await call('PUT', '/api/projects/beta/pin')).status, 200);
    assert.deepEqual((await call('DELETE', '/api/projects/beta/pin')).body, { pinned: false });
    assert.equal((await call('DELETE', '/api/projects/beta/pin')).status, 200, 'unpinning twice is no error');
    assert.equal(await pinnedInfo('beta'), false);
    const { id: second } = await stack.startQgis();
    const expected = [mapOf('alpha'), mapOf('gamma')];
    const loaded = async () => (await cachedMaps(call, second)).length === expected.length;
    await waitFor('the pinned projects', loaded, 10_000);
    assert.deepEqual(await cachedMaps(call, second), expected);
    assert.equal(await requestsServed(call, second), 0);
  });

  it('answers 404 for an unknown project, 409 for a pin of STEWARD_PINNED_PROJECTS, 400 for a bad schema', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const { status, body } = await call(method, '/api/projects/nowhere/pin');
      assert.deepEqual([status, body], [404, { error: 'project "nowhere" does not exist', code: 'project_not_found' }]);
      assert.equal((await call(method, '/api/projects/alpha/pin?schema=')).status, 400);
    }
    const configured = await call('DELETE', '/api/projects/gamma/pin');
    assert.deepEqual(configured, {
      status: 409,
      body: { error: 'project "gamma" is pinned by STEWARD_PINNED_PROJECTS; remove it there', code: 'project_pinned' },
    });
    assert.equal(await pinnedInfo('gamma'), true);
  });

  it('takes the pin away with a deleted project, and carries it along when the project is renamed by hand', async () => {
    assert.equal((await call('PUT', '/api/projects/beta/pin')).status, 200);
    const folder = join(stack.workDir, 'projects');
    renameSync(join(folder, 'beta', 'beta.qgs'), join(folder, 'beta', 'delta.qgs'));
    renameSync(join(folder, 'beta'), join(folder, 'delta'));
    assert.deepEqual(
      (await pins(call)).map(({ project }) => project),
      ['alpha', 'delta', 'gamma'],
    );
    assert.equal(await pinnedInfo('delta'), true);
    assert.equal((await call('DELETE', '/api/projects/alpha')).status, 200);
    assert.deepEqual(
      (await pins(call)).map(({ project }) => project),
      ['delta', 'gamma'],
    );
    await createProject('alpha');
    assert.equal(await pinnedInfo('alpha'), false, 'a new project of the same name is not pinned');
    assert.equal((await call('DELETE', '/api/projects/gamma')).status, 200);
    assert.deepEqual(
      (await pins(call)).map(({ project }) => project),
      ['delta'],
      'a configured pin shows only while its project exists',
    );
  });

  it('pins, lists and unpins with the steward command', async () => {
    const pinned = await steward(['pin', 'alpha'], env);
    assert.equal(pinned.code, 0, pinned.err);
    assert.match(pinned.out, /^Pinned alpha\.\n/);
    assert.match(pinned.out, new RegExp(`^${first}\\s+reloaded\\s+1\\s+-`, 'm'));
    const listed = await steward(['pins'], env);
    assert.match(listed.out, /^PROJECT\s+SCHEMA\s+SOURCE\s+MAP$/m);
    assert.match(listed.out, new RegExp(`^alpha\\s+public\\s+api\\s+${mapOf('alpha')}$`, 'm'));
    const cached = await steward(['instance', first, 'projects'], env);
    assert.match(cached.out, /^\S+\/alpha\.qgs\s+.*\s+yes$/m);
    const unpinned = await steward(['unpin', 'alpha'], env);
    assert.deepEqual([unpinned.code, unpinned.out], [0, 'Unpinned alpha.\n']);
    assert.doesNotMatch((await steward(['pins'], env)).out, /^alpha\s/m);
    const missing = await steward(['pin', 'nowhere'], env);
    assert.deepEqual(
      [missing.code, missing.err],
      [1, 'steward: project "nowhere" does not exist [project_not_found]\n'],
    );
  });
});

describe('pinned projects in PostgreSQL, shared by two Steward processes', () => {
  let db: TestDatabase;
  let dir = '';
  const apis: RunningServer[] = [];
  const monitoringPorts: number[] = [];
  let qgis: QgisServerProcess | undefined;

  const callOn =
    (index: number): Call =>
    (method, path, body) =>
      apiCall(apis[index]?.url ?? '', method, path, body);
  const [a, b] = [callOn(0), callOn(1)];
  const path = (name: string, rest = '') => `/api/projects/${name}${rest}?schema=pins`;
  const names = async (call: Call) => (await pins(call)).map(({ schema, project }) => `${schema}.${project}`);

  async function createProject(name: string): Promise<void> {
    assert.equal((await a('POST', '/api/projects', { name, author: 'pins', schema: 'pins' })).status, 201);
    const layer = {
      type: 'vector',
      name: 'parcels',
      datasource: `service=${db.service} table="geodata"."parcels" (geom)`,
    };
    const added = await a('POST', path(name, '/layers'), layer);
    assert.equal(added.status, 201, JSON.stringify(added.body));
  }

  before(async () => {
    db = await startTestDatabase();
    await createParcels(db);
    dir = mkdtempSync(join(tmpdir(), 'steward-pins-'));
    const qgisPort = await freePort();
    for (const name of ['a', 'b']) {
      const port = await freePort();
      monitoringPorts.push(port);
      const config = loadConfig({
        STEWARD_QGISSERVER_URL: `http://127.0.0.1:${qgisPort}/ows/`,
        STEWARD_QGISSERVER_PROJECTS_DIR: join(dir, name),
        STEWARD_QGISSERVER_PROJECTS_PSQL_SERVICE: db.service,
        STEWARD_QGISSERVER_MONITORING_PORT: String(port),
        STEWARD_LISTEN: '127.0.0.1:0',
        STEWARD_LOGLEVEL: 'ERROR',
      });
      apis.push(await startServer({ ...config, pgServiceFiles: serviceFiles(process.env) }));
    }
    for (const name of ['north', 'south', 'east']) await createProject(name);
  });

  after(async () => {
    await qgis?.stop();
    for (const api of apis) await api.close();
    await db?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('agrees on the pins: one pinned through A is loaded by an instance of B as it connects, another at once', async () => {
    assert.equal((await a('PUT', path('north', '/pin'))).status, 200);
    assert.deepEqual(await names(b), ['pins.north']);
    assert.equal(((await b('GET', path('north'))).body as Pinned).pinned, true);
    // PGSERVICEFILE (set by startTestDatabase) is inherited, so QGIS Server finds the service too.
    qgis = await QgisServerProcess.start({
      env: { QGIS_PLUGINPATH: PLUGIN_PATH, STEWARD_HOST: '127.0.0.1', STEWARD_PORT: String(monitoringPorts[1]) },
    });
    const id = await waitFor(
      'the instance on B',
      async () => {
        const listed = (await b('GET', '/api/instances')).body as { servers: { id: string }[] };
        return listed.servers[0]?.id;
      },
      15_000,
    );
    const mapOf = (name: string) => (pins: Pin[]) => pins.find(({ project }) => project === name)?.map ?? '';
    const north = mapOf('north')(await pins(a));
    await waitFor('the pinned project on B', async () => (await cachedMaps(b, id)).includes(north), 10_000);
    const { body } = await a('PUT', path('south', '/pin'));
    assert.deepEqual(
      (body as Pinned).instances.map(({ instance, status }) => [instance, status]),
      [[id, 'reloaded']],
    );
    const south = mapOf('south')(await pins(b));
    assert.deepEqual(await cachedMaps(a, id), [north, south].sort());
  });

  it('carries a pin along a rename in the database, and takes it away with a project deleted there or through Steward', async () => {
    await db.sql(`UPDATE pins.qgis_projects SET name = 'west' WHERE name = 'north'`);
    assert.deepEqual(await names(a), ['pins.south', 'pins.west']);
    assert.equal(((await b('GET', path('west'))).body as Pinned).pinned, true);
    await db.sql(`DELETE FROM pins.qgis_projects WHERE name = 'west'`);
    assert.deepEqual(await names(b), ['pins.south']);
    assert.equal((await b('DELETE', path('south'))).status, 200);
    assert.deepEqual(await names(a), []);
    await createProject('south');
    assert.equal(((await a('GET', path('south'))).body as Pinned).pinned, false);
    assert.equal((await a('DELETE', path('east', '/pin'))).status, 200, 'unpinning a project never pinned');
    assert.equal((await a('PUT', path('nowhere', '/pin'))).status, 404);
    assert.equal((await a('PUT', '/api/projects/east/pin?schema=elsewhere')).status, 404);
  });
});
