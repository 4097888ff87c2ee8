/**
 * The monitoring plugin never crashes QGIS Server on the production path: fresh qgis_mapserv.fcgi
 * processes of the tested release (spawn-fcgi, as deploy/ runs them) load the plugin and register
 * with a real Steward API. Each process gets one kind of first request (GetCapabilities, GetMap,
 * an erroring GetMap, a request without MAP), then every question of the protocol through
 * Steward's routes (metadata, about, projects, stats, logs, a reload, a style upload naming fonts,
 * a project check) and through its registry (invalidate), between more requests. Under FastCGI
 * libfcgi swaps `environ` per request and frees it afterwards, so a plugin that reads the
 * environment off the main thread kills the process (SIGSEGV in getenv). Twenty rounds: no
 * process may die, and every answer must be right.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { zipSync } from 'fflate';

import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { type ProjectCheck } from '../src/insight/checks.js';
import {
  type InstanceAbout,
  type InstanceLogs,
  type InstanceMetadata,
  type InstanceProjects,
  type InstanceStats,
  type ReloadResult,
} from '../src/monitor/protocol.js';
import { freePort } from '../src/runtime/ports.js';
import { processAlive } from '../src/runtime/process-alive.js';
import { distinctFreePorts, fcgiAddresses, QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { FastcgiQgisClient } from '../src/transport/qgis-fastcgi.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { labelledCircleQml } from './support/point-style.js';
import { TEST_QGIS } from './support/qgis-runtime.js';
import { waitFor } from './support/wait.js';

const repo = resolve(import.meta.dirname, '..');
const ROUNDS = 20;
const PROJECT = 'crash';
const MISSING_FONT = 'Steward Nowhere Sans';

/** The first request of each process of a round, by what it is (query strings; MAP is added). */
const FIRST_REQUESTS = {
  GetCapabilities: 'SERVICE=WMS&VERSION=1.3.0&REQUEST=GetCapabilities',
  GetMap:
    'SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=points&STYLES=&CRS=EPSG:4326&BBOX=-90,-180,90,180&WIDTH=32&HEIGHT=32&FORMAT=image/png',
  'an erroring GetMap':
    'SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=nowhere&STYLES=&CRS=EPSG:4326&BBOX=-90,-180,90,180&WIDTH=32&HEIGHT=32&FORMAT=image/png',
  'a request without MAP': 'SERVICE=WMS&VERSION=1.3.0&REQUEST=GetCapabilities',
} as const;
type FirstRequest = keyof typeof FIRST_REQUESTS;
const KINDS = Object.keys(FIRST_REQUESTS) as FirstRequest[];

/** One qgis_mapserv.fcgi process of a round's pool, reached straight on its FastCGI port. */
class FcgiInstance {
  /** The requests this test sent it straight. */
  sent = 0;
  /** Its instance id in Steward's registry. */
  id = '';
  private readonly client: FastcgiQgisClient;

  constructor(
    readonly kind: FirstRequest,
    readonly port: number,
    readonly pid: number,
  ) {
    this.client = new FastcgiQgisClient([{ host: '127.0.0.1', port }]);
  }

  /** Sends a GET of `query` straight to this process; answers its status and body. */
  async get(query: string): Promise<{ status: number; body: Buffer }> {
    this.sent++;
    const answer = await this.client.prepare(`http://127.0.0.1/ows/?${query}`)();
    const body = Buffer.isBuffer(answer.body) ? answer.body : await streamed(answer.body);
    return { status: answer.status, body };
  }
}

async function streamed(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe(`the plugin in fresh qgis_mapserv.fcgi processes (${TEST_QGIS.name})`, () => {
  let data: Fixtures;
  let workDir = '';
  let api: RunningServer;
  let ports: number[] = [];
  let monitoringPort = 0;
  let nginxPort = 0;
  let map = '';
  const call = (method: string, path: string, body?: unknown) => apiCall(api.url, method, path, body);

  before(async () => {
    data = makeFixtures();
    workDir = mkdtempSync(join(tmpdir(), 'steward-fcgi-crash-'));
    [monitoringPort, nginxPort, ports] = [await freePort(), await freePort(), await distinctFreePorts(KINDS.length)];
    api = await startServer(
      loadConfig({
        STEWARD_QGISSERVER_URL: `http://127.0.0.1:${nginxPort}/ows/`,
        STEWARD_QGISSERVER_FCGI: fcgiAddresses(ports),
        STEWARD_QGISSERVER_PROJECTS_DIR: join(workDir, 'projects'),
        STEWARD_QGISSERVER_MONITORING_PORT: String(monitoringPort),
        STEWARD_LOGLEVEL: 'ERROR',
        STEWARD_LISTEN: '127.0.0.1:0',
        STEWARD_QGISSERVER_VERSION: TEST_QGIS.version,
      }),
    );
    assert.equal((await call('POST', '/api/projects', { name: PROJECT, author: 'crash test' })).status, 201);
    const layer = { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` };
    assert.equal((await call('POST', `/api/projects/${PROJECT}/layers`, layer)).status, 201);
    const url = (await call('GET', `/api/projects/${PROJECT}/layers/points/map/url`)).body as { url: string };
    map = new URL(url.url).searchParams.get('MAP') ?? '';
    assert.ok(map.endsWith('.qgs'), map);
  });

  after(async () => {
    await api?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
    if (data) rmSync(data.dir, { recursive: true, force: true });
  });

  const instanceIds = async (): Promise<string[]> =>
    ((await call('GET', '/api/instances')).body as { servers: { id: string }[] }).servers.map(({ id }) => id);

  async function ask<T>(path: string): Promise<T> {
    const { status, body } = await call('GET', path);
    assert.equal(status, 200, `${path}: ${JSON.stringify(body)}`);
    return body as T;
  }

  /**
   * Starts the production pool, nginx in front of a process of each kind on its port, and waits
   * for every process to register.
   */
  async function startRound(number: number): Promise<{ pool: QgisFcgiPool; round: FcgiInstance[] }> {
    const pool = await QgisFcgiPool.start({
      deployDir: join(repo, 'deploy'),
      runDir: join(workDir, `run-${number}`),
      fcgiPorts: ports,
      port: nginxPort,
      program: TEST_QGIS.mapservFcgi,
      env: {
        QGIS_PLUGINPATH: join(repo, 'plugin'),
        STEWARD_HOST: 'localhost', // a name: the plugin resolves it once, as it starts
        STEWARD_PORT: String(monitoringPort),
        PYTHONDONTWRITEBYTECODE: '1',
      },
    });
    const pids = pool.pids;
    assert.equal(pids.length, KINDS.length);
    const round = KINDS.map((kind, index) => new FcgiInstance(kind, ports[index] ?? 0, pids[index] ?? 0));
    await waitFor('every process to register', async () => (await instanceIds()).length === round.length, 60_000);
    return { pool, round };
  }

  /** The processes of the round that are gone, or were replaced by the pool. */
  function deaths(pool: QgisFcgiPool, round: FcgiInstance[]): string[] {
    const now = pool.pids;
    return round
      .filter(({ pid }, index) => !processAlive(pid) || now[index] !== pid)
      .map(({ kind, pid }) => `the process of ${kind} (pid ${pid})`);
  }

  /** Ties each process to its instance: `about` names the process id. */
  async function identify(round: FcgiInstance[]): Promise<void> {
    for (const id of await instanceIds()) {
      const about = await ask<InstanceAbout>(`/api/instances/${id}/about`);
      const instance = round.find(({ pid }) => pid === about.process.pid);
      assert.ok(instance, `instance ${id} (pid ${about.process.pid}) is one of the round's processes`);
      instance.id = id;
      assert.ok(about.fonts.includes('DejaVu Sans'), about.fonts.join(', '));
      const logLevel = about.settings.values.find(({ name }) => name === 'QGIS_SERVER_LOG_LEVEL');
      assert.equal(logLevel?.source, 'environment', 'Steward starts QGIS Server with its log level');
    }
  }

  async function firstRequest(instance: FcgiInstance): Promise<void> {
    const query = FIRST_REQUESTS[instance.kind];
    const { status, body } = await instance.get(
      instance.kind === 'a request without MAP' ? query : `${query}&MAP=${encodeURIComponent(map)}`,
    );
    const expected = { GetCapabilities: 200, GetMap: 200, 'an erroring GetMap': 400, 'a request without MAP': 500 };
    assert.equal(status, expected[instance.kind], `${instance.kind}: ${body.toString('utf8', 0, 300)}`);
  }

  async function getMapOf(instance: FcgiInstance): Promise<void> {
    const { status, body } = await instance.get(`${FIRST_REQUESTS.GetMap}&MAP=${encodeURIComponent(map)}`);
    assert.equal(status, 200, body.toString('utf8', 0, 300));
    assert.deepEqual([...body.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG');
  }

  async function instanceQuestions(instance: FcgiInstance): Promise<void> {
    const base = `/api/instances/${instance.id}`;
    const metadata = await ask<InstanceMetadata>(base);
    assert.ok(metadata.versions.qgis.startsWith(`${TEST_QGIS.version}.`), metadata.versions.qgis);
    assert.ok(metadata.plugins.includes('steward_monitor') && metadata.providers.includes('ogr'));
    const stats = await ask<InstanceStats>(`${base}/stats`);
    assert.ok(stats.count >= instance.sent, `${instance.kind}: ${stats.count} requests counted, ${instance.sent} sent`);
    const logs = await ask<InstanceLogs>(`${base}/logs`);
    assert.ok(
      logs.lines.some((line) => line.includes('[Steward] REQUEST:')),
      `${instance.kind}: a request line in ${logs.lines.slice(-5).join(' | ')}`,
    );
    await ask<InstanceProjects>(`${base}/projects`);
  }

  /**
   * Reloads the project everywhere; answers how many instances said `reloaded`. A qgis_mapserv.fcgi
   * process reloads it as its next request starts (its main thread waits for requests, and only its
   * main thread may load a project), so requests reach each process until the answer comes. An
   * instance whose load did not end within the plugin's wait (1.5 s) rightly answers `pending`.
   */
  async function reload(round: FcgiInstance[]): Promise<number> {
    const wave = () => Promise.all(round.map((instance) => instance.get(FIRST_REQUESTS['a request without MAP'])));
    let answered = false;
    const reloading = call('POST', `/api/projects/${PROJECT}/reload`).finally(() => (answered = true));
    while (!answered) {
      await sleep(200);
      await wave();
    }
    const { status, body } = await reloading;
    assert.equal(status, 200, JSON.stringify(body));
    const answers = (body as { instances: (ReloadResult & { instance: string })[] }).instances;
    assert.deepEqual(answers.map(({ instance }) => instance).sort(), round.map(({ id }) => id).sort());
    for (const answer of answers) {
      if (answer.status === 'reloaded') assert.equal(answer.project?.layers, 1, JSON.stringify(answer));
      else assert.deepEqual(answer, { instance: answer.instance, map, status: 'pending' });
    }
    await wave(); // each process has served a request since: a reload still running then is done
    for (const instance of round) {
      const { projects } = await ask<InstanceProjects>(`/api/instances/${instance.id}/projects`);
      assert.deepEqual(
        projects.map((project) => [project.map, project.layers]),
        [[map, 1]],
      );
    }
    return answers.filter((answer) => answer.status === 'reloaded').length;
  }

  /** A style upload naming a font every instance has, and one none has: each instance is asked its fonts. */
  async function uploadStyles(round: FcgiInstance[]): Promise<void> {
    const upload = async (style: string, family: string) => {
      const response = await fetch(`${api.url}/api/projects/${PROJECT}/styles/${style}/package`, {
        method: 'PUT',
        headers: { 'content-type': 'application/zip' },
        body: zipSync({ [`${style}.qml`]: new TextEncoder().encode(labelledCircleQml(family)) }),
      });
      assert.ok([200, 201].includes(response.status), `${style}: ${response.status}`);
      return ((await response.json()) as { warnings: string[] }).warnings;
    };
    assert.deepEqual(await upload('sans', 'DejaVu Sans'), []);
    const [warning = '', ...more] = await upload('missing', MISSING_FONT);
    assert.deepEqual(more, []);
    assert.match(warning, new RegExp(`^font "${MISSING_FONT}" is installed on no QGIS Server instance \\(`));
    for (const { id } of round) assert.ok(warning.includes(id), `${id} answered its fonts: ${warning}`);
  }

  async function check(): Promise<void> {
    const result = await ask<ProjectCheck>(`/api/projects/${PROJECT}/check`);
    assert.notEqual(result.status, 'broken', JSON.stringify(result));
  }

  async function invalidate(round: FcgiInstance[]): Promise<void> {
    const registry = api.services.registry;
    assert.ok(registry);
    for (const { id } of round) assert.equal(await registry.request(id, 'invalidate', { map }), true);
  }

  // 20 fresh pools take 100-120 s on 2 cores beside another test file: more than the default timeout.
  it(`survives every question after each kind of first request, ${ROUNDS} rounds`, { timeout: 360_000 }, async (t) => {
    let reloaded = 0;
    for (let number = 1; number <= ROUNDS; number++) {
      const { pool, round } = await startRound(number);
      try {
        await Promise.all(round.map((instance) => firstRequest(instance)));
        await identify(round);
        await Promise.all(round.map((instance) => instanceQuestions(instance)));
        await Promise.all(round.map((instance) => getMapOf(instance)));
        reloaded += await reload(round);
        await uploadStyles(round);
        await check();
        await invalidate(round);
        await Promise.all(round.map((instance) => getMapOf(instance)));
        await Promise.all(round.map((instance) => instanceQuestions(instance)));
        assert.deepEqual(deaths(pool, round), [], `round ${number}`);
      } catch (error) {
        await sleep(1000); // a process that crashed may be heard of after its socket closed
        const dead = deaths(pool, round);
        throw new Error(`round ${number} (died: ${dead.join(', ') || 'none'}): ${String(error)}`, { cause: error });
      } finally {
        // SIGKILL: a process stopped with SIGTERM takes seconds to go, twenty rounds over.
        for (const { pid } of round) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
        await pool.stop();
        await waitFor('the round to leave the registry', async () => (await instanceIds()).length === 0, 20_000);
      }
    }
    t.diagnostic(`${reloaded} of ${ROUNDS * KINDS.length} reloads answered "reloaded", the others "pending"`);
    assert.ok(reloaded > 0, 'a request lets the FastCGI process reload within the wait');
  });
});
