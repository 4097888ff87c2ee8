/**
 * End to end: real qgis_mapserver processes load plugin/steward_monitor and register with the
 * registry; the API routes and the steward command report on them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import type { FastifyInstance } from 'fastify';

import { type InstanceSummary } from '../src/monitor/connection.js';
import type { InstanceLogs, InstanceMetadata, InstanceStats } from '../src/monitor/protocol.js';
import { InstanceRegistry } from '../src/monitor/registry.js';
import { freePort } from '../src/runtime/ports.js';
import { type QgisServerProcess } from '../src/runtime/qgis-server.js';
import { FakePlugin, hello, instancesApp } from './support/monitoring.js';
import { after, before, describe, test } from './support/node-test.js';
import { INFO_LOG_LEVEL, startTestQgis, TEST_QGIS } from './support/qgis-runtime.js';
import { writeSampleProject } from './support/sample-project.js';
import { waitFor } from './support/wait.js';

const repo = resolve(import.meta.dirname, '..');
const TOKEN = 'e2e-monitoring-secret';
const execFileAsync = promisify(execFile);

describe('monitoring real QGIS Server instances', () => {
  const registry = new InstanceRegistry({ token: TOKEN });
  const servers: QgisServerProcess[] = [];
  const fakes: FakePlugin[] = [];
  let app: FastifyInstance;
  let apiUrl = '';
  let monitoringPort = 0;
  let workDir = '';
  let project = '';

  async function api<T>(path: string): Promise<{ status: number; body: T }> {
    const response = await fetch(`${apiUrl}${path}`);
    return { status: response.status, body: (await response.json()) as T };
  }
  const instances = async () => (await api<{ servers: InstanceSummary[] }>('/api/instances')).body.servers;
  const ids = async () => (await instances()).map(({ id }) => id).sort();
  const stats = async (id: string) => (await api<InstanceStats>(`/api/instances/${id}/stats`)).body;

  async function steward(...args: string[]): Promise<string> {
    const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: repo,
      env: { ...process.env, STEWARD_SERVER_URL: apiUrl },
    });
    return stdout;
  }

  /** The instance whose request count a WMS request to `server` raises: ties ids to processes. */
  async function instanceOf(server: QgisServerProcess): Promise<string> {
    const before = new Map(await Promise.all((await ids()).map(async (id) => [id, (await stats(id)).count] as const)));
    await fetch(`${server.url}?MAP=${project}&SERVICE=WMS&REQUEST=GetCapabilities`).then((r) => r.text());
    for (const [id, count] of before) if ((await stats(id)).count > count) return id;
    throw new Error('no instance counted the request');
  }

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'steward-monitoring-'));
    monitoringPort = await freePort();
    await registry.start(monitoringPort, '127.0.0.1');
    app = await instancesApp(registry);
    apiUrl = await app.listen({ port: 0, host: '127.0.0.1' });
    const env = {
      QGIS_PLUGINPATH: join(repo, 'plugin'),
      STEWARD_HOST: '127.0.0.1',
      STEWARD_PORT: String(monitoringPort),
      STEWARD_MONITORING_TOKEN: TOKEN,
      PYTHONDONTWRITEBYTECODE: '1',
      ...INFO_LOG_LEVEL,
    };
    const started = await Promise.all([writeSampleProject(workDir), startTestQgis({ env }), startTestQgis({ env })]);
    [project] = started;
    servers.push(started[1], started[2]);
    await waitFor('two registered instances', () => registry.list().length === 2, 15_000);
  });

  after(async () => {
    for (const fake of fakes) fake.close();
    await Promise.all(servers.map((server) => server.stop()));
    await app?.close();
    await registry.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  test('both instances are listed by the API and by steward ps', async () => {
    const listed = await instances();
    assert.equal(listed.length, 2);
    for (const instance of listed) {
      assert.match(instance.id, /^[0-9a-f]{8}$/);
      assert.equal(instance.ip, '127.0.0.1');
      assert.ok(Number.isInteger(instance.binded) && instance.binded >= 0);
      const since = (Date.now() - Date.parse(instance.registered_at)) / 1000;
      assert.ok(Math.abs(since - instance.binded) <= 2, `registered ${since} s ago, binded ${instance.binded}`);
    }
    const table = await steward('ps');
    assert.match(table, /^INSTANCE ID\s+IP\s+STATUS\n/);
    for (const { id } of listed)
      assert.match(table, new RegExp(`^${id}\\s+127\\.0\\.0\\.1\\s+Binded \\d+ seconds ago$`, 'm'));
  });

  test('each QGIS Server log shows the plugin connecting', () => {
    for (const server of servers) {
      const lines = server.log.join('\n');
      assert.match(lines, /Try to connect\.\.\./);
      assert.match(lines, /Connected with Steward server/);
      assert.ok(lines.indexOf('Try to connect...') < lines.indexOf('Connected with Steward server'));
    }
  });

  test('steward inspect shows the QGIS version and the loaded plugin', async () => {
    const [id = ''] = await ids();
    const metadata = JSON.parse(await steward('inspect', id)) as InstanceMetadata;
    assert.ok(metadata.versions.qgis.startsWith(`${TEST_QGIS.version}.`), metadata.versions.qgis);
    assert.ok(metadata.plugins.includes('steward_monitor'));
    assert.ok(metadata.providers.includes('ogr'));
    assert.match(metadata.versions.gdal, /^\d+\.\d+/);
    assert.deepEqual((await api(`/api/instances/${id}/`)).body, metadata);
  });

  test('a GetMap raises the stats of the instance that served it and shows in its logs', async () => {
    const [first, second] = servers as [QgisServerProcess, QgisServerProcess];
    const served = await instanceOf(first);
    const other = await instanceOf(second);
    assert.notEqual(served, other);
    const [servedBefore, otherBefore] = [(await stats(served)).count, (await stats(other)).count];
    const getMap = `${first.url}?MAP=${project}&SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=places&STYLES=&CRS=EPSG:4326&BBOX=40,0,50,10&WIDTH=64&HEIGHT=64&FORMAT=image/png`;
    const image = await fetch(getMap);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.deepEqual([...new Uint8Array(await image.arrayBuffer()).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    const after = await stats(served);
    assert.equal(after.count, servedBefore + 1);
    assert.deepEqual([after.service, after.request, after.project], ['WMS', 'GetMap', project]);
    assert.ok(Number.isInteger(after.duration) && after.duration >= 0);
    assert.equal((await stats(other)).count, otherBefore);
    const logs = (await api<InstanceLogs>(`/api/instances/${served}/logs`)).body.lines;
    // The plugin's own line, which QGIS Server's parameter lines (logged at level 0 only) do not replace.
    const requestLine = `[Steward] REQUEST:GetMap SERVICE:WMS MAP:${project} answered 200 in `;
    assert.ok(
      logs.some((line) => line.includes(requestLine)),
      logs.slice(-10).join('\n'),
    );
    assert.ok((await steward('logs', served)).includes(requestLine));
    const table = await steward('stats');
    assert.match(table, new RegExp(`^${served}\\s+${after.count}\\s+\\d+ ms\\s+WMS\\s+GetMap\\s+${project}$`, 'm'));
  });

  test('garbage, a 10 MiB line and a wrong token leave the instances served', async () => {
    const garbage = await FakePlugin.connect(monitoringPort, undefined);
    const huge = await FakePlugin.connect(monitoringPort, undefined);
    const intruder = await FakePlugin.connect(monitoringPort, hello('not-the-token'));
    fakes.push(garbage, huge, intruder);
    garbage.socket.write(Buffer.from([0xff, 0x00, 0x7b, 0x0a]));
    const mebibyte = Buffer.alloc(1024 * 1024, 'z');
    for (let i = 0; i < 10; i++) huge.socket.write(mebibyte);
    await Promise.all([garbage.closed, huge.closed, intruder.closed]);
    assert.equal((await instances()).length, 2);
    for (const id of await ids()) assert.equal(typeof (await stats(id)).count, 'number');
  });

  test('a plugin that never answers gets 504 after about 2 seconds', async () => {
    const known = new Set(await ids());
    const silent = await FakePlugin.connect(monitoringPort, hello(TOKEN));
    fakes.push(silent);
    const id = await waitFor(
      'the silent plugin',
      () => registry.list().find((instance) => !known.has(instance.id))?.id,
    );
    const started = Date.now();
    const response = await api<{ error: string }>(`/api/instances/${id}/stats`);
    const elapsed = Date.now() - started;
    assert.equal(response.status, 504);
    assert.match(response.body.error, /did not answer/);
    assert.ok(elapsed >= 1900 && elapsed < 3000, `answered after ${elapsed} ms`);
    silent.close();
    await waitFor('the silent plugin to be forgotten', () => !registry.list().some((instance) => instance.id === id));
  });

  test('after the registry restarts, both instances are back within 10 seconds', async () => {
    await registry.close();
    assert.deepEqual(await ids().catch(() => []), []);
    await registry.start(monitoringPort, '127.0.0.1');
    const restarted = Date.now();
    await waitFor('both instances to reconnect', () => registry.list().length === 2, 10_000);
    assert.ok(Date.now() - restarted <= 10_000);
    // The registry hears the plugin's hello before the test has read the line QGIS Server logged with it.
    const connections = (server: QgisServerProcess): number =>
      server.log.filter((line) => line.includes('Connected with Steward server')).length;
    await waitFor('both instances to log their second connection', () =>
      servers.every((server) => connections(server) >= 2),
    );
    for (const server of servers) assert.equal(connections(server), 2);
  });

  test('killing an instance removes it from the list', async () => {
    const [first, second] = servers as [QgisServerProcess, QgisServerProcess];
    const survivor = await instanceOf(first);
    const exited = once(second.child, 'exit');
    second.child.kill('SIGKILL');
    await exited;
    await waitFor('the stopped instance to be forgotten', () => registry.list().length === 1);
    assert.deepEqual(await ids(), [survivor]);
    assert.match(await steward('ps'), new RegExp(`^INSTANCE ID.*\\n${survivor}\\s.*\\n$`));
  });
});
