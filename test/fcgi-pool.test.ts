/**
 * The production QGIS Server of deploy/: nginx in front of qgis_mapserv.fcgi processes started by
 * spawn-fcgi. The pool draws maps, and each of its processes registers with Steward on its own.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { InstanceRegistry } from '../src/monitor/registry.js';
import { freePort } from '../src/runtime/ports.js';
import { distinctFreePorts, QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { after, before, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';
import { sampleGetMapUrl, writeSampleProject } from './support/sample-project.js';
import { waitFor } from './support/wait.js';

const repo = resolve(import.meta.dirname, '..');
const PROCESSES = 3;

describe('the FastCGI pool of deploy/', () => {
  const registry = new InstanceRegistry();
  let pool: QgisFcgiPool;
  let workDir = '';
  let project = '';

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'steward-fcgi-'));
    const monitoringPort = await freePort();
    await registry.start(monitoringPort, '127.0.0.1');
    project = await writeSampleProject(workDir);
    pool = await QgisFcgiPool.start({
      deployDir: join(repo, 'deploy'),
      runDir: join(workDir, 'run'),
      fcgiPorts: await distinctFreePorts(PROCESSES),
      env: { QGIS_PLUGINPATH: join(repo, 'plugin'), STEWARD_HOST: '127.0.0.1', STEWARD_PORT: String(monitoringPort) },
    });
  });

  after(async () => {
    await pool?.stop();
    await registry.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('registers each of its processes as an instance', async () => {
    await waitFor(`${PROCESSES} instances`, () => registry.list().length === PROCESSES, 20_000);
  });

  it('draws maps through nginx, spread over its processes', async () => {
    const getMap = async (): Promise<number[]> => {
      const response = await fetch(sampleGetMapUrl(pool.url, project, { TRANSPARENT: 'true' }));
      assert.equal(response.headers.get('content-type'), 'image/png', await response.clone().text());
      const image = decodePng(Buffer.from(await response.arrayBuffer()));
      // The point at 2.35 E, 48.85 N is drawn around pixel (13, 11); the corner stays empty.
      assert.equal(image.pixel(0, 59)[3], 0);
      return [-2, -1, 0, 1, 2].flatMap((dx) => [-2, -1, 0, 1, 2].map((dy) => image.pixel(13 + dx, 11 + dy)[3]));
    };
    const maps = await Promise.all(Array.from({ length: 2 * PROCESSES }, () => getMap()));
    for (const alphas of maps)
      assert.ok(
        alphas.some((alpha) => alpha > 0),
        'the point is drawn',
      );
    const served = await Promise.all(registry.list().map(async ({ id }) => (await registry.stats(id)).count));
    assert.equal(
      served.reduce((sum, count) => sum + count, 0),
      2 * PROCESSES,
    );
    assert.ok(
      served.filter((count) => count > 0).length > 1,
      `requests spread over the processes: ${served.join(', ')}`,
    );
  });
});
