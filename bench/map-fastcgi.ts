/**
 * The smallest map in production: the QGIS Server pool of deploy/ (qgis_mapserv.fcgi processes
 * behind nginx), its GetMap asked of nginx straight, and of an API that sends it over FastCGI to
 * the same processes (STEWARD_QGISSERVER_FCGI). Both take one hop between the client and QGIS
 * Server, so what the API adds is its own work against nginx's. An API that sends it over HTTP
 * to nginx (two hops, as before the setting) is measured in the same rounds, and so is a bare Node
 * server in nginx's place (bench/bare-fastcgi-proxy.ts): what answering in Node costs by itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { distinctFreePorts, fcgiAddresses, fcgiServerAddresses, QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { type Fixtures } from '../test/support/fixtures.js';
import { apiCall } from '../test/support/http.js';
import { startBareFastcgiProxy } from './bare-fastcgi-proxy.js';
import { send } from './http-client.js';
import { ms, summarise, table, type Timing } from './stats.js';

export interface FastcgiMapComparison {
  processes: number;
  rounds: number;
  viaNginx: Timing;
  viaApi: Timing;
  /** Each round's API time less its nginx time. */
  added: Timing;
  /** The same for an API that asks nginx over HTTP. */
  addedOverHttp: Timing;
  /** The same for a bare Node server that asks the processes over FastCGI. */
  addedByBareNode: Timing;
}

const REPO = join(import.meta.dirname, '..');

/** The 64 x 64 RGB GeoTIFF's map through nginx and through the API, `rounds` times each, in turn. */
export async function mapOverFastcgi(data: Fixtures, rounds: number): Promise<FastcgiMapComparison> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-fastcgi-'));
  const processes = availableParallelism();
  const pool = await QgisFcgiPool.start({
    deployDir: join(REPO, 'deploy'),
    runDir: join(dir, 'run'),
    fcgiPorts: await distinctFreePorts(processes),
  });
  const apis: RunningServer[] = [];
  const bare = await startBareFastcgiProxy(pool.url, fcgiServerAddresses(pool.fcgiPorts));
  try {
    const startApi = async (env: Record<string, string>): Promise<RunningServer> => {
      const api = await startServer(
        loadConfig({
          STEWARD_QGISSERVER_URL: pool.url,
          STEWARD_QGISSERVER_PROJECTS_DIR: join(dir, 'projects'),
          STEWARD_LOGLEVEL: 'ERROR',
          STEWARD_LISTEN: '127.0.0.1:0',
          ...env,
        }),
      );
      apis.push(api);
      return api;
    };
    const overFastcgi = await startApi({ STEWARD_QGISSERVER_FCGI: fcgiAddresses(pool.fcgiPorts) });
    const overHttp = await startApi({});
    const call = (method: string, path: string, body?: unknown) => apiCall(overFastcgi.url, method, path, body);
    await call('POST', '/api/projects/', { name: 'bench_fcgi', author: 'bench' });
    await call('POST', '/api/projects/bench_fcgi/layers', { type: 'raster', name: 'rgb', datasource: data.rgbTiff });
    const { url } = (await call('GET', '/api/projects/bench_fcgi/layers/rgb/map/url')).body as { url: string };
    const route = (api: RunningServer): string => `${api.url}/api/projects/bench_fcgi/layers/rgb/map`;
    const targets = [url, route(overFastcgi), route(overHttp), bare.through(url)];
    // Every process loads the project, and each API builds the map's request.
    for (let warm = 0; warm < 2 * processes; warm++) await Promise.all(targets.map((target) => send(target)));
    const [nginx = [], api = [], http = [], bareNode = []] = await inTurn(targets, rounds);
    const less = (samples: number[]): Timing =>
      summarise(samples.map((time, round) => time - (nginx[round] ?? Number.NaN)));
    return {
      processes,
      rounds,
      viaNginx: summarise(nginx),
      viaApi: summarise(api),
      added: less(api),
      addedOverHttp: less(http),
      addedByBareNode: less(bareNode),
    };
  } finally {
    await bare.close();
    for (const api of apis) await api.close();
    await pool.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each round asks every target once, the first of them changing from round to round; the times by target. */
async function inTurn(targets: string[], rounds: number): Promise<number[][]> {
  const samples = targets.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    for (let step = 0; step < targets.length; step++) {
      const index = (round + step) % targets.length;
      const start = performance.now();
      await send(targets[index] as string);
      samples[index]?.push(performance.now() - start);
    }
  }
  return samples;
}

/** The comparison as a report section, against the target of `share` of QGIS Server's time. */
export function fastcgiMapReport(result: FastcgiMapComparison, share: number): string {
  const { viaApi, viaNginx, added, addedOverHttp, addedByBareNode } = result;
  const percent = (timing: Timing): string => `${((timing.median / viaNginx.median) * 100).toFixed(1)}%`;
  return [
    `## GET .../map over FastCGI against the same GetMap through nginx (the production pool, 400 x 400 PNG)`,
    `${result.rounds} rounds, each a GetMap through nginx, the map of the same layer from an API with STEWARD_QGISSERVER_FCGI, which reaches the same ${result.processes} qgis_mapserv.fcgi processes in one hop, and from one without, which asks nginx over HTTP, and from a bare Node server in nginx's place (bench/bare-fastcgi-proxy.ts: node:http's server and the API's FastCGI client, no routing, checks or logging); their order changes every round. "added" is the median of the rounds' differences from nginx's time, against the nginx median. The bare server's is what answering in Node instead of nginx costs on this machine before any of the API's own work.`,
    '',
    table(
      [
        'layer',
        'API /map median',
        'nginx median',
        'API p95',
        'nginx p95',
        'added by the API over FastCGI',
        'added over HTTP to nginx',
        'added by a bare Node server over FastCGI',
        'target',
      ],
      [
        [
          '64 x 64 RGB GeoTIFF',
          ms(viaApi.median),
          ms(viaNginx.median),
          ms(viaApi.p95),
          ms(viaNginx.p95),
          `+${ms(added.median)} ms (${percent(added)})`,
          `+${ms(addedOverHttp.median)} ms (${percent(addedOverHttp)})`,
          `+${ms(addedByBareNode.median)} ms (${percent(addedByBareNode)})`,
          `within ${share * 100}%: ${added.median <= viaNginx.median * share ? 'met' : 'not met'}`,
        ],
      ],
    ),
  ].join('\n');
}
