/**
 * What `npm start` runs once set up (node dist/src/launcher.js), end to end: the
 * API, the pool of qgis_mapserv.fcgi behind nginx with the plugin, MapProxy under gunicorn, all
 * supervised; a project made through the API drawn through nginx, through the API and by MapProxy;
 * the README's quick tour run as written;
 * a killed pool process started again and counted; SIGTERM leaves no process behind. Then with
 * the development servers: a killed qgis_mapserver is started again and counted too. Needs the
 * compiled checkout (scripts/setup.sh builds it).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { freePort } from '../src/runtime/ports.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { mapStatus } from './support/pool-load.js';
import { until, waitFor } from './support/wait.js';

const repo = resolve(import.meta.dirname, '..');
const PROCESSES = 2;

/** The addresses the launcher prints, by their label ("Steward API", "QGIS Server", "MapProxy"). */
type Printed = Map<string, string>;

function printedUrl(printed: Printed, label: string): string {
  const url = printed.get(label)?.match(/https?:\/\/\S+/)?.[0];
  assert.ok(url, `the launcher printed no address for ${label}: ${[...printed.keys()].join(', ')}`);
  return url;
}

interface Running {
  pid: number;
  command: string;
}

/** The processes whose command line or environment names `folder`: what the launcher started there. */
function processesIn(folder: string): Running[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .flatMap((entry) => {
      try {
        const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
        const environment = readFileSync(`/proc/${entry}/environ`, 'utf8');
        return command.includes(folder) || environment.includes(folder) ? [{ pid: Number(entry), command }] : [];
      } catch {
        return []; // gone meanwhile
      }
    });
}

/** The pool's qgis_mapserv.fcgi processes. */
function poolProcesses(dataDir: string): number[] {
  return processesIn(dataDir)
    .filter(({ command }) => command.includes('qgis_mapserv.fcgi'))
    .map(({ pid }) => pid);
}

interface Launched {
  launcher: ChildProcess;
  printed: Printed;
  /** What it wrote to stdout and stderr so far. */
  output(): string;
  /** The API's origin, as it printed it. */
  api: string;
}

/** The launcher, as `npm start` runs it, on `dataDir` with `env`; once it printed its addresses. */
async function launch(dataDir: string, env: NodeJS.ProcessEnv): Promise<Launched> {
  const launcher = spawn(process.execPath, [join(repo, 'dist', 'src', 'launcher.js')], {
    cwd: repo,
    env: {
      ...process.env,
      STEWARD_DATA_DIR: dataDir,
      STEWARD_LISTEN: `127.0.0.1:${await freePort()}`,
      STEWARD_LOGLEVEL: 'ERROR',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const printed: Printed = new Map();
  let output = '';
  const take = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const line of output.split('\n')) {
      const label = line.match(/^([A-Z][A-Za-z ]+?)\s{2,}/)?.[1];
      if (label) printed.set(label, line);
    }
  };
  launcher.stdout?.on('data', take);
  launcher.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(
    () => `the launcher to print its addresses:\n${output}`,
    () => printed.has('Web console'),
    120_000,
  );
  return { launcher, printed, output: () => output, api: new URL(printedUrl(printed, 'Steward API')).origin };
}

/** SIGKILLs the launcher and what it started in `dataDir`, unless it exited. */
function killAll(launched: Launched | undefined, dataDir: string): void {
  if (launched?.launcher.exitCode === null) {
    launched.launcher.kill('SIGKILL');
    for (const { pid } of processesIn(dataDir)) process.kill(pid, 'SIGKILL');
  }
  rmSync(dataDir, { recursive: true, force: true });
}

/** SIGTERMs the launcher: it exits 0, and every process it started in `dataDir` goes with it. */
async function stopsCleanly(launched: Launched, dataDir: string): Promise<void> {
  launched.launcher.kill('SIGTERM');
  const [code] = (await once(launched.launcher, 'exit')) as [number | null];
  assert.equal(code, 0, launched.output());
  await until(
    () =>
      `no process of the stack left: ${processesIn(dataDir)
        .map(({ command }) => command)
        .join('; ')}`,
    () => processesIn(dataDir).length === 0,
    10_000,
  );
}

describe('npm start, end to end', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'steward-npm-start-'));
  let launched: Launched;
  let printed: Printed;
  let api = '';
  const call = (method: string, path: string, body?: unknown) => apiCall(api, method, path, body);

  // What a process that died mid-upload left: an abandoned file, and one an upload still writes.
  const uploads = join(dataDir, 'uploads');
  const abandonedUpload = join(uploads, `.upload.${randomUUID()}.tmp`);
  const uploadInProgress = join(uploads, `.upload.${randomUUID()}.tmp`);

  before(async () => {
    mkdirSync(uploads);
    for (const file of [abandonedUpload, uploadInProgress]) writeFileSync(file, 'part of a bundle');
    const hourAgo = Date.now() / 1000 - 3600;
    utimesSync(abandonedUpload, hourAgo, hourAgo);
    launched = await launch(dataDir, { STEWARD_QGIS_PROCESSES: String(PROCESSES) });
    ({ printed, api } = launched);
  });

  after(() => killAll(launched, dataDir));

  it('is ready, with every pool process registered through the plugin', async () => {
    await until('readiness', async () => (await call('GET', '/health/ready')).status === 200, 60_000);
    const ids = await waitFor('the pool processes to register', async () => {
      const { servers } = (await call('GET', '/api/instances')).body as { servers: Array<{ id: string }> };
      return servers.length === PROCESSES ? servers.map(({ id }) => id) : undefined;
    });
    assert.equal(new Set(ids).size, PROCESSES);
  });

  it('clears what an upload cut short by a stopped process left, and not an upload in progress', async () => {
    await until('the abandoned upload file to be removed', () => !existsSync(abandonedUpload), 10_000);
    assert.ok(existsSync(uploadInProgress));
  });

  it('draws a project made through the API through nginx, through the API and through MapProxy', async () => {
    assert.equal((await call('POST', '/api/projects', { name: 'started', author: 'e2e' })).status, 201);
    const dem = { type: 'raster', name: 'dem', datasource: join(repo, 'data', 'demo', 'elevation.tif') };
    assert.equal((await call('POST', '/api/projects/started/layers', dem)).status, 201);
    const { url } = (await call('GET', '/api/projects/started/layers/dem/map/url')).body as { url: string };
    assert.ok(url.startsWith(printedUrl(printed, 'QGIS Server')), `${url} is nginx's /ows/`);
    assert.equal(await mapStatus(url), 200);
    assert.equal(await mapStatus(`${api}/api/projects/started/layers/dem/map`), 200);
    // nginx is the public OWS address: the service URLs the console shows are on it, not said internal.
    const { endpoints } = (await call('GET', '/api/projects/started/services')).body as {
      endpoints: { wms: string; address: string };
    };
    assert.equal(endpoints.address, 'public');
    assert.ok(endpoints.wms.startsWith(`${printedUrl(printed, 'QGIS Server')}?MAP=`), endpoints.wms);
    const mapproxy = new URL(printedUrl(printed, 'MapProxy')).origin;
    const capabilities = await fetch(`${mapproxy}/started/wmts/1.0.0/WMTSCapabilities.xml`);
    assert.equal(capabilities.status, 200);
    assert.match(await capabilities.text(), /<ows:Identifier>dem<\/ows:Identifier>/);
  });

  it("runs the README's quick tour as written (its port aside): a layer of the demo data, drawn", async () => {
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    const tour = /A quick tour against `npm start`[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(tour, 'the README has its quick tour');
    const drawn = join(repo, 'districts.png');
    try {
      const said = execFileSync('sh', ['-e', '-c', tour.replaceAll('localhost:5000', new URL(api).host)], {
        cwd: repo,
        encoding: 'utf8',
      });
      assert.doesNotMatch(said, /"error"/, said);
      const project = (await call('GET', '/api/projects/demo')).body as { title: string };
      assert.equal(project.title, 'Demo town');
      const image = decodePng(readFileSync(drawn));
      assert.ok(image.paintedPixels() > image.width * image.height * 0.1, 'the districts are drawn');
    } finally {
      rmSync(drawn, { force: true });
    }
  });

  it('starts a killed pool process again and counts it in /metrics', async () => {
    const [victim, ...others] = poolProcesses(dataDir);
    assert.ok(victim !== undefined && others.length === PROCESSES - 1, `pool processes: ${victim} ${others.join(' ')}`);
    process.kill(victim, 'SIGKILL');
    await until(
      'the killed process to be started again',
      () => {
        const now = poolProcesses(dataDir);
        return now.length === PROCESSES && !now.includes(victim);
      },
      30_000,
    );
    const metrics = await (await fetch(`${api}/metrics`)).text();
    assert.match(metrics, /steward_child_restarts_total\{child="qgis-fcgi:\d+"\} 1/);
  });

  it('stops on SIGTERM, and every process it started goes with it', () => stopsCleanly(launched, dataDir));
});

describe('npm start with the development servers (STEWARD_DEV_SERVERS=1)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'steward-npm-start-dev-'));
  let launched: Launched;

  before(async () => {
    launched = await launch(dataDir, { STEWARD_DEV_SERVERS: '1' });
  });
  after(() => killAll(launched, dataDir));

  it('starts a killed qgis_mapserver again, counts it in /metrics, and it registers again', async () => {
    const call = (method: string, path: string) => apiCall(launched.api, method, path);
    const registered = async (): Promise<string[]> =>
      ((await call('GET', '/api/instances')).body as { servers: Array<{ id: string }> }).servers.map(({ id }) => id);
    const [first] = await waitFor('qgis_mapserver to register', async () => {
      const ids = await registered();
      return ids.length === 1 && ids;
    });
    const mapservers = (): number[] =>
      processesIn(dataDir)
        .filter(({ command }) => /qgis_mapserver /.test(command))
        .map(({ pid }) => pid);
    const [victim] = mapservers();
    assert.ok(victim !== undefined, 'qgis_mapserver runs');
    process.kill(victim, 'SIGKILL');
    await until(
      'qgis_mapserver to be started again',
      () => mapservers().length === 1 && mapservers()[0] !== victim,
      30_000,
    );
    await until(
      'the restart counted in /metrics',
      async () =>
        /steward_child_restarts_total\{child="qgis-mapserver"\} 1/.test(
          await (await fetch(`${launched.api}/metrics`)).text(),
        ),
      30_000,
    );
    await waitFor('the new process to register', async () => {
      const ids = await registered();
      return ids.length === 1 && ids[0] !== first;
    });
    await until('readiness', async () => (await call('GET', '/health/ready')).status === 200, 30_000);
  });

  it('stops on SIGTERM, and every process it started goes with it', () => stopsCleanly(launched, dataDir));
});

describe('npm start with access control (STEWARD_API_TOKEN)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'steward-npm-start-access-'));
  const token = 'the administrator of npm start with access control';
  let launched: Launched;
  const call = (method: string, path: string, body?: unknown) => apiCall(launched.api, method, path, body, token);

  before(async () => {
    launched = await launch(dataDir, { STEWARD_API_TOKEN: token, STEWARD_QGIS_PROCESSES: '1' });
  });
  after(() => killAll(launched, dataDir));

  it('serves MapProxy through its nginx, which asks the API, and MapProxy itself on loopback for the health check', async () => {
    await until('readiness', async () => (await call('GET', '/health/ready')).status === 200, 60_000);
    assert.equal((await call('POST', '/api/projects', { name: 'guarded', author: 'e2e' })).status, 201);
    const tiles = new URL(printedUrl(launched.printed, 'MapProxy')).origin;
    const capabilities = `${tiles}/guarded/wmts/1.0.0/WMTSCapabilities.xml`;
    assert.equal((await fetch(capabilities)).status, 401, 'nginx asked the API, which wants a token');
    const allowed = await fetch(capabilities, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(allowed.status, 200);
    const { cache } = (await call('GET', '/api/server/settings')).body as { cache: { mapproxy_url: string } };
    const mapproxy = new URL(cache.mapproxy_url);
    assert.equal(mapproxy.hostname, '127.0.0.1');
    assert.notEqual(mapproxy.origin, tiles, 'MapProxy listens apart from nginx');
    assert.equal((await fetch(`${mapproxy.origin}/guarded/wmts/1.0.0/WMTSCapabilities.xml`)).status, 200);
  });

  it('stops on SIGTERM, and every process it started goes with it', () => stopsCleanly(launched, dataDir));
});
