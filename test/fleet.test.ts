/**
 * End to end: two Steward processes sharing a PostgreSQL database, and QGIS Server instances with
 * the steward_monitor plugin, each on a host of its own (network namespaces on one bridge). Every
 * Steward lists every instance and reads any of them; a project change through either is drawn by
 * every instance; when a Steward dies, its instances register with the other one.
 *
 * Then the same database under two replicas on the production stack (support/replicas.ts: each
 * its own nginx and pool of qgis_mapserv.fcgi with the plugin, its own folder, the API's maps over
 * FastCGI): maps through either path, styles, checks, pins, symbology and instance pages, and no
 * QGIS Server process dies of any of it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { parseServiceFile } from '../src/storage/pg-service.js';
import { type ApiProcess, startApiProcess } from './support/api-process.js';
import { createLan, type Lan } from './support/lan.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { createParcels, startTestDatabase, type TestDatabase } from './support/postgres.js';
import { ows } from './support/qgis.js';
import { type Replica, type Replicas, startReplicas } from './support/replicas.js';
import { waitFor } from './support/wait.js';
import { fillStyle } from './support/write-bodies.js';

const repo = resolve(import.meta.dirname, '..');
const TOKEN = 'fleet-monitoring-secret';
const MONITORING_PORT = 7001;
const QGIS_PORT = 8000;
const STEWARDS = ['steward-a', 'steward-b'] as const;
const QGIS_HOSTS = ['qgis-1', 'qgis-2'] as const;
const DEFAULT_FILL = [229, 182, 54, 255];

type Steward = (typeof STEWARDS)[number];

/** The service file of the hosts: the test database's service, reached through the gateway's relay. */
async function lanServiceFile(lan: Lan, db: TestDatabase, dir: string): Promise<string> {
  const entries = parseServiceFile(readFileSync(db.serviceFile, 'utf8')).get(db.service) ?? new Map<string, string>();
  const port = await lan.relay({ host: entries.get('host') ?? '127.0.0.1', port: Number(entries.get('port') ?? 5432) });
  entries.set('host', lan.gateway);
  entries.set('port', String(port));
  const file = join(dir, 'pg_service.conf');
  writeFileSync(file, [`[${db.service}]`, ...[...entries].map(([key, value]) => `${key}=${value}`), ''].join('\n'));
  return file;
}

describe('two Steward processes and two QGIS Server hosts sharing one database', () => {
  let db: TestDatabase;
  let lan: Lan;
  let dir = '';
  let serviceFile = '';
  const apis = new Map<Steward, ApiProcess>();
  const qgis: QgisServerProcess[] = [];
  let map = '';

  const api = (steward: Steward): ApiProcess => {
    const found = apis.get(steward);
    if (!found) throw new Error(`${steward} is not running`);
    return found;
  };
  const instanceIds = async (steward: Steward): Promise<string[]> => {
    const { body } = await api(steward).call('GET', '/api/instances');
    const { servers } = body as { servers: { id: string; binded: number; registered_at: string }[] };
    for (const { registered_at, binded } of servers) {
      const since = (Date.now() - Date.parse(registered_at)) / 1000;
      assert.ok(Math.abs(since - binded) <= 2, `registered ${registered_at}, ${binded} s ago`);
    }
    return servers.map((server) => server.id).sort();
  };
  const project = (rest = ''): string => `/api/projects/shared${rest}?schema=fleet`;

  /** The colour each QGIS Server host draws in the middle of the parcel. */
  async function drawn(): Promise<number[][]> {
    return Promise.all(
      qgis.map(async (server) => {
        const response = await ows(server, map, {
          SERVICE: 'WMS',
          VERSION: '1.3.0',
          REQUEST: 'GetMap',
          LAYERS: 'parcels',
          STYLES: '',
          CRS: 'EPSG:4326',
          BBOX: '44,1,46,3',
          WIDTH: '32',
          HEIGHT: '32',
          FORMAT: 'image/png',
          TRANSPARENT: 'true',
        });
        assert.equal(response.headers.get('content-type'), 'image/png', await response.clone().text());
        return decodePng(Buffer.from(await response.arrayBuffer())).pixel(16, 16);
      }),
    );
  }

  async function restyle(steward: Steward, name: string, color: string): Promise<void> {
    assert.equal((await api(steward).call('POST', project('/styles'), fillStyle(name, color))).status, 201);
    const applied = await api(steward).call('POST', project('/layers/parcels/style'), { name, current: true });
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
  }

  before(async () => {
    db = await startTestDatabase();
    await createParcels(db);
    lan = await createLan([...STEWARDS, ...QGIS_HOSTS]);
    dir = mkdtempSync(join(tmpdir(), 'steward-fleet-'));
    serviceFile = await lanServiceFile(lan, db, dir);
    for (const steward of STEWARDS) {
      const started = await startApiProcess(
        {
          PGSERVICEFILE: serviceFile,
          STEWARD_LISTEN: `${lan.address(steward)}:0`,
          STEWARD_QGISSERVER_MONITORING_PORT: String(MONITORING_PORT),
          STEWARD_MONITORING_TOKEN: TOKEN,
          STEWARD_QGISSERVER_PROJECTS_PSQL_SERVICE: db.service,
          STEWARD_QGISSERVER_PROJECTS_DIR: join(dir, steward),
          STEWARD_QGISSERVER_URL: `http://${lan.address(QGIS_HOSTS[0])}:${QGIS_PORT}/ows/`,
        },
        lan.exec(steward),
      );
      apis.set(steward, started);
    }
    // qgis-1 prefers steward-a and qgis-2 steward-b: each Steward holds one instance.
    const order = [STEWARDS, [...STEWARDS].reverse()];
    for (const [index, host] of QGIS_HOSTS.entries()) {
      const addresses = (order[index] ?? []).map((steward) => `${lan.address(steward)}:${MONITORING_PORT}`);
      const server = await QgisServerProcess.start({
        host: lan.address(host),
        port: QGIS_PORT,
        command: [...lan.exec(host), 'qgis_mapserver'],
        env: {
          PGSERVICEFILE: serviceFile,
          QGIS_PLUGINPATH: join(repo, 'plugin'),
          STEWARD_HOST: addresses.join(','),
          STEWARD_MONITORING_TOKEN: TOKEN,
        },
      });
      qgis.push(server);
    }
  });

  after(async () => {
    for (const server of qgis) await server.stop();
    for (const started of apis.values()) await started.kill();
    await lan?.close();
    await db?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists every instance on every Steward, and reads the stats of each through either', async () => {
    const ids = await waitFor(
      'two registrations',
      async () => {
        const listed = await instanceIds('steward-a');
        return listed.length === 2 && listed;
      },
      40_000,
      250,
    );
    assert.deepEqual(await instanceIds('steward-b'), ids);
    for (const steward of STEWARDS) {
      for (const id of ids) {
        const { status, body } = await api(steward).call('GET', `/api/instances/${id}/stats`);
        assert.equal(status, 200, `${steward} reads ${id}: ${JSON.stringify(body)}`);
        assert.ok(Number.isInteger((body as { count: number }).count));
        const logs = await api(steward).call('GET', `/api/instances/${id}/logs`);
        assert.ok((logs.body as { lines: string[] }).lines.some((line) => line.includes('Connected with Steward')));
      }
      assert.equal((await api(steward).call('GET', '/api/instances/00000000/stats')).status, 404);
    }
  });

  it('has every instance draw a database project changed through either Steward', async () => {
    const created = await api('steward-a').call('POST', '/api/projects/', {
      name: 'shared',
      author: 't',
      schema: 'fleet',
    });
    assert.equal(created.status, 201);
    const parcels = {
      type: 'vector',
      name: 'parcels',
      datasource: `service=${db.service} table="geodata"."parcels" (geom)`,
    };
    assert.equal((await api('steward-b').call('POST', project('/layers'), parcels)).status, 201);
    const { body } = await api('steward-a').call('GET', project('/layers/parcels/map/url'));
    map = new URL((body as { url: string }).url).searchParams.get('MAP') ?? '';
    assert.deepEqual(await drawn(), [DEFAULT_FILL, DEFAULT_FILL]);
    // Both instances now hold the project in their cache; only an invalidation makes them read it again.
    await restyle('steward-a', 'teal', '#00BBBB');
    assert.deepEqual(await drawn(), [
      [0, 187, 187, 255],
      [0, 187, 187, 255],
    ]);
    await restyle('steward-b', 'orange', '#FF8000');
    assert.deepEqual(await drawn(), [
      [255, 128, 0, 255],
      [255, 128, 0, 255],
    ]);
  });

  it('keeps serving through the other Steward when one dies, its instances registering there', async () => {
    const before = await instanceIds('steward-b');
    await api('steward-a').kill();
    apis.delete('steward-a');
    const ids = await waitFor(
      'the re-registration with steward-b',
      async () => {
        const listed = await instanceIds('steward-b');
        const renewed = listed.filter((id) => !before.includes(id));
        return listed.length === 2 && renewed.length === 1 && listed;
      },
      40_000,
      250,
    );
    for (const id of ids) assert.equal((await api('steward-b').call('GET', `/api/instances/${id}/stats`)).status, 200);
    await restyle('steward-b', 'purple', '#800080');
    assert.deepEqual(await drawn(), [
      [128, 0, 128, 255],
      [128, 0, 128, 255],
    ]);
  });
});

describe('two replicas on the production stack sharing one database', () => {
  let db: TestDatabase;
  let replicas: Replicas;
  let a: Replica;
  let b: Replica;
  let pids: number[] = [];

  const ids = async (replica: Replica): Promise<string[]> =>
    ((await replica.api.call('GET', '/api/instances')).body as { servers: { id: string }[] }).servers
      .map(({ id }) => id)
      .sort();
  const ok = async (replica: Replica, method: string, path: string, body?: unknown): Promise<unknown> => {
    const reply = await replica.api.call(method, path, body);
    assert.ok(
      reply.status < 300,
      `${method} ${path} through ${replica.api.url}: ${reply.status} ${JSON.stringify(reply.body)}`,
    );
    return reply.body;
  };
  /** The middle of the parcel, as a replica draws it through its API (FastCGI) and its nginx. */
  const colours = async (replica: Replica): Promise<number[][]> => {
    const { url } = (await ok(replica, 'GET', '/api/projects/shared/layers/parcels/map/url')) as { url: string };
    assert.ok(url.startsWith(replica.qgis.url), url);
    const answers = [await fetch(`${replica.api.url}/api/projects/shared/layers/parcels/map`), await fetch(url)];
    return Promise.all(
      answers.map(async (answer) => {
        assert.equal(answer.headers.get('content-type'), 'image/png', await answer.clone().text());
        const image = decodePng(Buffer.from(await answer.arrayBuffer()));
        return image.pixel(image.width / 2, image.height / 2);
      }),
    );
  };

  before(async () => {
    db = await startTestDatabase();
    await createParcels(db);
    replicas = await startReplicas(db, 2);
    [a, b] = replicas.list as [Replica, Replica];
    pids = [...a.qgis.pids, ...b.qgis.pids];
    await waitFor('every pool process to register', async () => (await ids(a)).length === pids.length, 60_000);
    await ok(a, 'POST', '/api/projects/', { name: 'shared', author: 'fleet' });
    const parcels = {
      type: 'vector',
      name: 'parcels',
      datasource: `service=${db.service} table="geodata"."parcels" (geom)`,
    };
    await ok(b, 'POST', '/api/projects/shared/layers', parcels);
  });
  after(async () => {
    await replicas?.stop();
    await db?.stop();
  });

  it('draws a database project through each API and each nginx, in the style set through the other', async () => {
    for (const replica of [a, b]) assert.deepEqual(await colours(replica), [DEFAULT_FILL, DEFAULT_FILL]);
    await ok(a, 'POST', '/api/projects/shared/styles', fillStyle('teal', '#00BBBB'));
    await ok(b, 'POST', '/api/projects/shared/layers/parcels/style', { name: 'teal', current: true });
    for (const replica of [a, b])
      assert.deepEqual(await colours(replica), [
        [0, 187, 187, 255],
        [0, 187, 187, 255],
      ]);
    assert.deepEqual(
      await ok(b, 'GET', '/api/projects/shared/styles'),
      await ok(a, 'GET', '/api/projects/shared/styles'),
    );
  });

  it('checks the project, pins it and describes the symbology through either', async () => {
    for (const replica of [a, b]) {
      const check = (await ok(replica, 'GET', '/api/projects/shared/check')) as { status: string };
      assert.equal(check.status, 'ok', JSON.stringify(check));
      await ok(replica, 'GET', '/api/checks');
      const symbology = await fetch(`${replica.api.url}/api/symbology/vector/polygon/single_symbol/fill/properties`);
      assert.equal(symbology.status, 200, await symbology.clone().text());
      assert.match(symbology.headers.get('steward-qgis-version') ?? '', /^\d+\.\d+(\.\d+)?$/);
    }
    await ok(a, 'PUT', '/api/projects/shared/pin');
    const pins = (await ok(b, 'GET', '/api/pins')) as { pins: { project: string }[] };
    assert.deepEqual(
      pins.pins.map(({ project }) => project),
      ['shared'],
    );
  });

  it("shows every instance's pages through either replica, and no QGIS Server process dies of it", async () => {
    const listed = await ids(a);
    assert.deepEqual(await ids(b), listed);
    for (const replica of [a, b]) {
      for (const id of listed) {
        for (const page of ['', '/about', '/stats', '/logs', '/projects'])
          await ok(replica, 'GET', `/api/instances/${id}${page}`);
      }
    }
    assert.deepEqual([...a.qgis.pids, ...b.qgis.pids], pids, 'the same processes still serve');
  });
});
