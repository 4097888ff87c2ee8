/**
 * End to end: QGIS Server 3.22 keeps a project stored in PostgreSQL cached until it restarts. With
 * monitoring on, Steward tells the steward_monitor plugin of a running qgis_mapserver to drop a
 * database project it changed, so the next request reads the project again; a change made in the
 * database behind Steward's back shows in the instance's cache until the project is reloaded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { type RunningServer, startServer } from '../src/app/server.js';
import { serviceFiles } from '../src/config.js';
import { type InstanceReload } from '../src/insight/project-fleet.js';
import type { InstanceMetadata, InstanceProjects } from '../src/monitor/protocol.js';
import { freePort } from '../src/runtime/ports.js';
import { type QgisServerProcess } from '../src/runtime/qgis-server.js';
import { readS3Settings } from '../src/s3-settings.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng, type Image } from './support/png.js';
import { createParcels, startTestDatabase, type TestDatabase } from './support/postgres.js';
import { ows, projectProblems, publishedLayers } from './support/qgis.js';
import { INFO_LOG_LEVEL, startTestQgis } from './support/qgis-runtime.js';
import { until } from './support/wait.js';
import { fillStyle } from './support/write-bodies.js';

const repo = resolve(import.meta.dirname, '..');
const TOKEN = 'refresh-monitoring-secret';
const DEFAULT_FILL = [229, 182, 54, 255];
const TEAL = [0, 187, 187, 255];

describe('a database project changed through the API, served by a running QGIS Server', () => {
  let db: TestDatabase;
  let api: RunningServer;
  let qgis: QgisServerProcess;
  let projectsDir = '';
  let map = '';
  let instances: () => Promise<{ id: string }[]>;
  let qgisPort = 0;
  let monitoringPort = 0;

  /** An API on the test database; without a monitoring port it cannot tell QGIS Server of its changes. */
  function startApi(monitoring: number | undefined): Promise<RunningServer> {
    return startServer({
      qgisServerUrl: `http://127.0.0.1:${qgisPort}/ows/`,
      projectsDir,
      logLevel: 'error',
      listen: { host: '127.0.0.1', port: 0 },
      psqlService: db.service,
      pgServiceFiles: serviceFiles(process.env),
      monitoringPort: monitoring,
      monitoringToken: TOKEN,
      mapproxyProjectsDir: undefined,
      cacheS3Bucket: undefined,
      cacheS3Dir: '/mapproxy/cache',
      s3: readS3Settings({}),
      apiToken: undefined,
      dataRoots: undefined,
      styleBodyLimit: 16 * 1024 * 1024,
      tokenFailures: 10,
      bodyIdleSeconds: 30,
      uploadBudget: 24 * 1024 * 1024,
      processingOutputLimit: 8 * 1024 ** 3,
      minFreeSpace: 0,
      jobsConcurrency: 2,
      projectCacheBytes: 128 * 1024 * 1024,
      history: { versions: 1000, days: 90 },
    });
  }

  async function waitForOneInstance(): Promise<void> {
    await until(
      () => `QGIS Server to register with the API:\n${qgis.log.slice(-20).join('\n')}`,
      async () => (await instances()).length === 1,
      15_000,
      100,
    );
  }

  const call = (method: string, path: string, body?: unknown) => apiCall(api.url, method, path, body);
  const project = (rest = ''): string => `/api/projects/live${rest}?schema=refresh`;

  /** A WMS GetMap of the whole data extent (1..3 E, 44..46 N), straight from QGIS Server. */
  async function getMap(layers: string): Promise<Image> {
    const response = await ows(qgis, map, {
      SERVICE: 'WMS',
      VERSION: '1.3.0',
      REQUEST: 'GetMap',
      LAYERS: layers,
      STYLES: '',
      CRS: 'EPSG:4326',
      BBOX: '44,1,46,3',
      WIDTH: '64',
      HEIGHT: '64',
      FORMAT: 'image/png',
      TRANSPARENT: 'true',
    });
    assert.equal(response.headers.get('content-type'), 'image/png', `${layers}: ${await response.clone().text()}`);
    return decodePng(Buffer.from(await response.arrayBuffer()));
  }

  before(async () => {
    db = await startTestDatabase();
    await createParcels(db);
    await db.sql(`
      CREATE TABLE geodata.roads (id serial PRIMARY KEY, geom geometry(LineString, 4326));
      INSERT INTO geodata.roads (geom) VALUES (ST_GeomFromText('LINESTRING(1 44,3 46)', 4326));
      GRANT SELECT ON geodata.roads TO ${db.user};
    `);
    projectsDir = mkdtempSync(join(tmpdir(), 'steward-refresh-'));
    [qgisPort, monitoringPort] = [await freePort(), await freePort()];
    api = await startApi(monitoringPort);
    // PGSERVICEFILE (set by startTestDatabase) is inherited, so QGIS Server finds the service too.
    qgis = await startTestQgis({
      port: qgisPort,
      env: {
        QGIS_PLUGINPATH: join(repo, 'plugin'),
        STEWARD_HOST: '127.0.0.1',
        STEWARD_PORT: String(monitoringPort),
        STEWARD_MONITORING_TOKEN: TOKEN,
        ...INFO_LOG_LEVEL,
      },
    });
    instances = async () => ((await call('GET', '/api/instances')).body as { servers: { id: string }[] }).servers;
    await waitForOneInstance();
  });

  after(async () => {
    await qgis?.stop();
    await api?.close();
    await db?.stop();
    if (projectsDir) rmSync(projectsDir, { recursive: true, force: true });
  });

  it('has QGIS Server load the database project with its one layer, which it then caches', async () => {
    assert.deepEqual(await call('POST', '/api/projects/', { name: 'live', author: 'test', schema: 'refresh' }), {
      status: 201,
      body: true,
    });
    const parcels = {
      type: 'vector',
      name: 'parcels',
      datasource: `service=${db.service} table="geodata"."parcels" (geom)`,
    };
    assert.deepEqual(await call('POST', project('/layers'), parcels), { status: 201, body: true });
    const { url } = (await call('GET', project('/layers/parcels/map/url'))).body as { url: string };
    map = new URL(url).searchParams.get('MAP') ?? '';
    assert.equal(map, `postgresql:?service=${db.service}&schema=refresh&project=live`);
    assert.deepEqual((await getMap('parcels')).pixel(32, 32), DEFAULT_FILL);
    assert.deepEqual(await publishedLayers(qgis, map), ['parcels']);
    const [{ id = '' } = {}] = await instances();
    const metadata = (await call('GET', `/api/instances/${id}`)).body as InstanceMetadata;
    assert.ok(metadata.cache.projects.includes(map), 'the instance served the database project');
  });

  it('publishes a layer added and draws the new current style at once after the change', async () => {
    const roads = { type: 'vector', name: 'roads', datasource: `service=${db.service} table="geodata"."roads" (geom)` };
    assert.deepEqual(await call('POST', project('/layers'), roads), { status: 201, body: true });
    assert.equal((await call('POST', project('/styles'), fillStyle('teal', '#00BBBB'))).status, 201);
    assert.equal((await call('POST', project('/layers/parcels/style'), { name: 'teal', current: true })).status, 200);
    // No waiting: each API change returns once the instance has queued the invalidation.
    assert.deepEqual(await publishedLayers(qgis, map), ['parcels', 'roads']);
    assert.deepEqual((await getMap('parcels')).pixel(32, 32), TEAL);
    const road = await getMap('roads');
    assert.ok(
      [-1, 0, 1].some((d) => road.pixel(32 + d, 32)[3] > 0),
      'the road crosses the middle',
    );
    assert.equal(road.pixel(5, 5)[3], 0, 'and nothing else is drawn');
    assert.deepEqual(projectProblems(qgis), []);
    assert.ok(!qgis.log.some((line) => line.includes('Could not remove')), 'every invalidation applied');
  });

  it('drops on reconnection what was changed while the instance was not connected', async () => {
    await api.close();
    const unheard = await startApi(undefined);
    try {
      assert.equal(
        (await apiCall(unheard.url, 'POST', project('/styles'), fillStyle('orange', '#FF8000'))).status,
        201,
      );
      assert.equal(
        (await apiCall(unheard.url, 'POST', project('/layers/parcels/style'), { name: 'orange', current: true }))
          .status,
        200,
      );
    } finally {
      await unheard.close();
    }
    assert.deepEqual((await getMap('parcels')).pixel(32, 32), TEAL, 'nobody told the instance of the change');
    api = await startApi(monitoringPort);
    await waitForOneInstance();
    assert.deepEqual((await getMap('parcels')).pixel(32, 32), [255, 128, 0, 255]);
  });

  it("shows a project edited in the database behind the instance's back as cached until it is reloaded", async () => {
    const [{ id = '' } = {}] = await instances();
    const cachedLayers = async () => {
      const { projects } = (await call('GET', `/api/instances/${id}/projects`)).body as InstanceProjects;
      return projects.find((entry) => entry.map === map)?.layers;
    };
    assert.equal(await cachedLayers(), 2);
    const other = '/api/projects/other?schema=refresh';
    assert.equal(
      (await call('POST', '/api/projects/', { name: 'other', author: 'test', schema: 'refresh' })).status,
      201,
    );
    const parcels = {
      type: 'vector',
      name: 'parcels',
      datasource: `service=${db.service} table="geodata"."parcels" (geom)`,
    };
    assert.equal((await call('POST', other.replace('?', '/layers?'), parcels)).status, 201);
    await db.sql(
      `UPDATE refresh.qgis_projects SET content = (SELECT content FROM refresh.qgis_projects WHERE name = 'other')
        WHERE name = 'live'`,
    );
    assert.deepEqual(await publishedLayers(qgis, map), ['parcels', 'roads'], 'the instance still serves its copy');
    assert.equal(await cachedLayers(), 2);
    const reload = (await call('POST', project('/reload'))).body as { instances: InstanceReload[] };
    assert.deepEqual(
      reload.instances.map(({ instance, status, project: loaded }) => [instance, status, loaded?.layers]),
      [[id, 'reloaded', 1]],
    );
    assert.equal(await cachedLayers(), 1);
    assert.deepEqual(await publishedLayers(qgis, map), ['parcels']);
    assert.equal((await call('DELETE', other)).status, 200);
  });

  it('shows a PostgreSQL table dropped in the reload and the check, and all clear once it is back', async () => {
    const [{ id = '' } = {}] = await instances();
    const cached = async () =>
      ((await call('GET', `/api/instances/${id}/projects`)).body as InstanceProjects).projects.some(
        (entry) => entry.map === map,
      );
    interface Check {
      status: string;
      layers: { name: string; status: string; findings: { kind: string }[] }[];
      findings: { kind: string }[];
    }
    const check = async () => (await call('GET', project('/check'))).body as Check;
    assert.equal((await check()).status, 'ok');
    await db.sql('DROP TABLE geodata.parcels');
    try {
      const reload = (await call('POST', project('/reload'))).body as { instances: InstanceReload[] };
      assert.deepEqual(
        reload.instances.map(({ instance, status }) => [instance, status]),
        [[id, 'refused']],
      );
      assert.equal(await cached(), false, 'the instance holds no copy of a project it refused');
      const broken = await check();
      assert.equal(broken.status, 'broken');
      assert.deepEqual(
        broken.findings.map(({ kind }) => kind),
        ['server'],
      );
      assert.deepEqual(
        broken.layers.map(({ name, status, findings }) => [name, status, findings.map(({ kind }) => kind)]),
        [['parcels', 'broken', ['datasource']]],
      );
    } finally {
      await db.sql(`
        CREATE TABLE geodata.parcels (id serial PRIMARY KEY, geom geometry(MultiPolygon, 4326));
        INSERT INTO geodata.parcels (geom) VALUES (ST_GeomFromText('MULTIPOLYGON(((1 44,3 44,3 46,1 46,1 44)))', 4326));
        GRANT SELECT ON geodata.parcels TO ${db.user};
      `);
    }
    const repaired = (await call('POST', project('/reload'))).body as { instances: InstanceReload[] };
    assert.deepEqual(
      repaired.instances.map(({ instance, status }) => [instance, status]),
      [[id, 'reloaded']],
    );
    assert.equal(await cached(), true);
    assert.equal((await check()).status, 'ok');
  });

  it('stops serving a database project once it is deleted', async () => {
    assert.deepEqual(await call('DELETE', project()), { status: 200, body: true });
    const capabilities = await ows(qgis, map, { SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' });
    const text = await capabilities.text();
    assert.doesNotMatch(text, /<Name>parcels<\/Name>/);
    assert.match(text, /Project file error/);
  });
});
