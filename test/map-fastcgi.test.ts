/**
 * The API's GETs to QGIS Server over FastCGI (STEWARD_QGISSERVER_FCGI), straight to the processes
 * of the production pool: the same answers, byte for byte, as the same GETs through the pool's
 * nginx, and a process that dies costs no map that had not reached it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { distinctFreePorts, fcgiAddresses, QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { bytes } from '../src/services/maps.js';
import { FastcgiQgisClient } from '../src/transport/qgis-fastcgi.js';
import { HttpQgisClient } from '../src/transport/qgis-get.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { TEST_QGIS } from './support/qgis-runtime.js';
import { waitFor } from './support/wait.js';

const repo = resolve(import.meta.dirname, '..');
const PROCESSES = 2;

describe('maps over FastCGI, straight to the QGIS Server pool', () => {
  let data: Fixtures;
  let pool: QgisFcgiPool;
  let api: RunningServer;
  let workDir = '';
  const throughNginx = new HttpQgisClient();
  const call = (method: string, path: string, body?: unknown) => apiCall(api.url, method, path, body);

  before(async () => {
    data = makeFixtures();
    workDir = mkdtempSync(join(tmpdir(), 'steward-map-fastcgi-'));
    pool = await QgisFcgiPool.start({
      deployDir: join(repo, 'deploy'),
      runDir: join(workDir, 'run'),
      fcgiPorts: await distinctFreePorts(PROCESSES),
      program: TEST_QGIS.mapservFcgi,
      // Qt orders an XML element's attributes by a hash seeded afresh in each process: one seed
      // for all, so that two processes write the same document alike.
      env: { QT_HASH_SEED: '0' },
    });
    api = await startServer(
      loadConfig({
        STEWARD_QGISSERVER_URL: pool.url,
        STEWARD_QGISSERVER_FCGI: fcgiAddresses(pool.fcgiPorts),
        STEWARD_QGISSERVER_PROJECTS_DIR: join(workDir, 'projects'),
        STEWARD_LOGLEVEL: 'ERROR',
        STEWARD_LISTEN: '127.0.0.1:0',
        STEWARD_QGISSERVER_VERSION: TEST_QGIS.version,
      }),
    );
    assert.equal((await call('POST', '/api/projects/', { name: 'world', author: 'test' })).status, 201);
    for (const layer of [
      { type: 'raster', name: 'rgb', datasource: data.rgbTiff },
      { type: 'vector', name: 'polygons', datasource: `${data.geopackage}|layername=polygons` },
    ]) {
      assert.equal((await call('POST', '/api/projects/world/layers', layer)).status, 201);
    }
  });

  after(async () => {
    throughNginx.close();
    await api?.close();
    await pool?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  /** The URL the API hands out for a layer's map: QGIS Server's, through nginx. */
  async function mapUrl(layer: string): Promise<string> {
    const reply = await call('GET', `/api/projects/world/layers/${layer}/map/url`);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    return (reply.body as { url: string }).url;
  }

  async function viaNginx(url: string): Promise<Buffer> {
    return bytes((await throughNginx.prepare(url)()).body);
  }

  async function viaApi(path: string): Promise<Response> {
    return fetch(`${api.url}${path}`);
  }

  it('draws the same map through the API as nginx answers for it, byte for byte', async () => {
    for (const layer of ['rgb', 'polygons']) {
      const direct = await viaNginx(await mapUrl(layer));
      const reply = await viaApi(`/api/projects/world/layers/${layer}/map`);
      assert.equal(reply.status, 200, await reply.clone().text());
      assert.equal(reply.headers.get('content-type'), 'image/png');
      const proxied = Buffer.from(await reply.arrayBuffer());
      assert.ok(
        proxied.equals(direct),
        `${layer}: ${proxied.length} bytes through the API, ${direct.length} through nginx`,
      );
      const image = decodePng(proxied);
      assert.equal(image.width, 400);
      assert.ok(image.paintedPixels() > 0, `${layer} is drawn`);
    }
  });

  it('gets the capabilities, a refusal, the SLD and the legend nginx gets, byte for byte', async () => {
    const capabilities = new URL(await mapUrl('rgb'));
    for (const name of [...capabilities.searchParams.keys()])
      if (name !== 'MAP') capabilities.searchParams.delete(name);
    for (const [name, value] of Object.entries({ SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' })) {
      capabilities.searchParams.set(name, value);
    }
    const answer = await straightTo(pool.fcgiPorts).prepare(capabilities.toString())();
    // The release under test answered (a root's, when STEWARD_TEST_QGIS names one).
    assert.match(
      answer.headers.get('server') ?? '',
      new RegExp(`QGIS version ${TEST_QGIS.version.replace('.', '\\.')}\\.`),
    );
    const overFastcgi = await bytes(answer.body);
    const overNginx = await viaNginx(capabilities.toString());
    assert.match(overNginx.toString(), /<WMS_Capabilities[^]*<OnlineResource[^>]*xlink:href="http:\/\/127\.0\.0\.1/);
    assert.equal(overFastcgi.toString(), overNginx.toString());

    // A refusal too: its status (FastCGI's Status header) and its text.
    const unknownLayer = new URL(await mapUrl('rgb'));
    unknownLayer.searchParams.set('LAYERS', 'nowhere');
    const refusal = await straightTo(pool.fcgiPorts).prepare(unknownLayer.toString())();
    const nginxRefusal = await throughNginx.prepare(unknownLayer.toString())();
    assert.equal(refusal.status, nginxRefusal.status);
    assert.ok(refusal.status >= 400, `status ${refusal.status}`);
    assert.equal((await bytes(refusal.body)).toString(), (await bytes(nginxRefusal.body)).toString());

    const legendUrl = new URL(capabilities);
    for (const [name, value] of Object.entries({
      REQUEST: 'GetLegendGraphic',
      LAYER: 'polygons',
      FORMAT: 'image/png',
      SLD_VERSION: '1.1.0',
    })) {
      legendUrl.searchParams.set(name, value);
    }
    const legend = await viaApi('/api/projects/world/layers/polygons/legend');
    assert.equal(legend.status, 200, await legend.clone().text());
    assert.ok(Buffer.from(await legend.arrayBuffer()).equals(await viaNginx(legendUrl.toString())));
    const sld = await viaApi('/api/projects/world/layers/polygons/style.sld');
    assert.equal(sld.status, 200, await sld.clone().text());
    assert.match(await sld.text(), /<StyledLayerDescriptor[^]*polygons/);
  });

  it('loses no map to a killed process beyond one clean 502, and the restarted process serves again', async () => {
    const url = await mapUrl('rgb');
    const expected = await viaNginx(url);
    const [killed] = pool.pids;
    const [killedPort] = pool.fcgiPorts;
    assert.ok(killed !== undefined && killedPort !== undefined);
    process.kill(killed, 'SIGKILL');
    const statuses: number[] = [];
    for (let round = 0; round < 6; round++) {
      const reply = await viaApi('/api/projects/world/layers/rgb/map');
      statuses.push(reply.status);
      if (reply.status === 200) assert.ok(Buffer.from(await reply.arrayBuffer()).equals(expected));
      else assert.match(((await reply.json()) as { error: string }).error, /QGIS Server/);
    }
    assert.ok(statuses.filter((status) => status !== 200).length <= 1, `statuses: ${statuses.join(', ')}`);
    assert.ok(
      statuses.every((status) => status === 200 || status === 502),
      `statuses: ${statuses.join(', ')}`,
    );
    const restarted = straightTo([killedPort]);
    const redrawn = await waitFor(
      'the killed process to start again and draw',
      () =>
        restarted
          .prepare(url)()
          .then(
            (answer) => bytes(answer.body),
            () => undefined,
          ),
      30_000,
    );
    assert.ok(redrawn.equals(expected));
    assert.ok(!pool.pids.includes(killed));
    const replies = await Promise.all(
      Array.from({ length: 2 * PROCESSES }, () => viaApi('/api/projects/world/layers/rgb/map')),
    );
    for (const reply of replies) {
      assert.equal(reply.status, 200);
      assert.ok(Buffer.from(await reply.arrayBuffer()).equals(expected));
    }
  });
});

/** A client of the pool's processes on `ports` alone. */
function straightTo(ports: readonly number[]): FastcgiQgisClient {
  return new FastcgiQgisClient(ports.map((port) => ({ host: '127.0.0.1', port })));
}
