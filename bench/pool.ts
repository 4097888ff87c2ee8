/**
 * GetMap throughput of the production QGIS Server of deploy/ (qgis_mapserv.fcgi processes, one per
 * core, behind nginx) against one qgis_mapserver on the same project and cores, and the plugin's
 * cost on the pool.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

import autocannon from 'autocannon';

import { InstanceRegistry } from '../src/monitor/registry.js';
import { QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { writeSampleProject } from '../test/support/sample-project.js';
import { table } from './stats.js';

const REPO = join(import.meta.dirname, '..');
const ROUNDS = 3;
/** A large map of the sample project: drawing it, not the request, takes the time. */
const GETMAP = {
  SERVICE: 'WMS',
  VERSION: '1.3.0',
  REQUEST: 'GetMap',
  LAYERS: 'places',
  STYLES: '',
  CRS: 'EPSG:3857',
  BBOX: '200000,5500000,600000,6300000',
  WIDTH: '1600',
  HEIGHT: '1600',
  FORMAT: 'image/png',
};

async function requestsPerSecond(url: string): Promise<number> {
  const result = await autocannon({ url, connections: 2 * availableParallelism(), duration: 6 });
  if (result.non2xx > 0) throw new Error(`QGIS Server failed ${result.non2xx} GetMap requests`);
  return result.requests.average;
}

export async function runPoolBench(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-pool-'));
  const registry = new InstanceRegistry();
  const processes = availableParallelism();
  const pool = (name: string, env: NodeJS.ProcessEnv = {}): Promise<QgisFcgiPool> =>
    QgisFcgiPool.start({
      nginxTemplate: join(REPO, 'deploy', 'nginx.conf'),
      runDir: join(dir, name),
      processes,
      env,
    });
  const servers: Record<string, QgisServerProcess | QgisFcgiPool> = {};
  try {
    const project = await writeSampleProject(dir);
    await registry.start(0, '127.0.0.1');
    servers['one qgis_mapserver'] = await QgisServerProcess.start();
    servers[`pool of ${processes}, without plugin`] = await pool('bare');
    servers[`pool of ${processes}, with plugin`] = await pool('plugin', {
      QGIS_PLUGINPATH: join(REPO, 'plugin'),
      STEWARD_HOST: '127.0.0.1',
      STEWARD_PORT: String(registry.port),
    });
    const totals = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, server] of Object.entries(servers)) {
        const url = new URL(server.url);
        for (const [key, value] of Object.entries({ MAP: project, ...GETMAP })) url.searchParams.set(key, value);
        totals.set(name, (totals.get(name) ?? 0) + (await requestsPerSecond(url.toString())) / ROUNDS);
      }
    }
    const baseline = totals.get('one qgis_mapserver') ?? Number.NaN;
    const bare = totals.get(`pool of ${processes}, without plugin`) ?? Number.NaN;
    const rows = [...totals].map(([name, rps]) => [
      name,
      rps.toFixed(2),
      `${(rps / baseline).toFixed(2)}x`,
      name.endsWith('with plugin') ? `${((rps / bare - 1) * 100).toFixed(1)}%` : '',
    ]);
    return [
      `## GetMap throughput of the FastCGI pool against one qgis_mapserver (${processes} cores; ${GETMAP.WIDTH}x${GETMAP.HEIGHT} maps)`,
      table(['QGIS Server', 'GetMap/s', 'against one qgis_mapserver', 'plugin cost on the pool'], rows),
    ].join('\n');
  } finally {
    for (const server of Object.values(servers)) await server.stop();
    await registry.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
