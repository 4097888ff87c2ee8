/**
 * GetMap throughput of QGIS Server with the monitoring plugin (API up, API down) against the same
 * QGIS Server without it: the plugin must not slow rendering.
 */
import { join } from 'node:path';

import autocannon from 'autocannon';

import { freePort } from '../src/runtime/ports.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { makeFixtures } from '../test/support/fixtures.js';
import { startStack } from '../test/support/stack.js';
import { table } from './stats.js';

const PLUGIN_PATH = join(import.meta.dirname, '..', 'plugin');
const ROUNDS = 3;
/** The share of GetMap throughput the plugin may cost (issue 22's target). */
const PLUGIN_COST = 0.01;

async function requestsPerSecond(url: string): Promise<number> {
  const result = await autocannon({ url, connections: 4, duration: 6 });
  // A request cut off when the run ends counts as an error; failed answers do not happen here.
  if (result.non2xx > 0) throw new Error(`QGIS Server failed ${result.non2xx} GetMap requests`);
  return result.requests.average;
}

export async function runPluginBench(): Promise<string> {
  const data = makeFixtures();
  const monitoringPort = await freePort();
  const stack = await startStack({ monitoringPort });
  const plugin = (port: number): NodeJS.ProcessEnv => ({
    QGIS_PLUGINPATH: PLUGIN_PATH,
    STEWARD_HOST: '127.0.0.1',
    STEWARD_PORT: String(port),
  });
  const servers = {
    'without plugin': await QgisServerProcess.start(),
    'plugin, API up': await QgisServerProcess.start({ env: plugin(monitoringPort) }),
    'plugin, API down': await QgisServerProcess.start({ env: plugin(await freePort()) }),
  };
  try {
    await stack.call('POST', '/api/projects/', { name: 'throughput', author: 'bench' });
    await stack.call('POST', '/api/projects/throughput/layers', {
      type: 'vector',
      name: 'polygons',
      datasource: `${data.geopackage}|layername=polygons`,
    });
    const { url } = (await stack.call('GET', '/api/projects/throughput/layers/polygons/map/url')).body as {
      url: string;
    };
    const path = new URL(url);
    const totals = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, server] of Object.entries(servers)) {
        const target = new URL(path.pathname + path.search, server.url);
        totals.set(name, (totals.get(name) ?? 0) + (await requestsPerSecond(target.toString())) / ROUNDS);
      }
    }
    const baseline = totals.get('without plugin') ?? Number.NaN;
    const rows = [...totals].map(([name, rps]) => {
      const cost = 1 - rps / baseline;
      return [
        name,
        rps.toFixed(1),
        `${((rps / baseline - 1) * 100).toFixed(1)}%`,
        name === 'without plugin'
          ? ''
          : `cost within ${PLUGIN_COST * 100}%: ${cost <= PLUGIN_COST ? 'met' : 'not met'}`,
      ];
    });
    return [
      `## GetMap throughput of QGIS Server with the monitoring plugin (target: within ${PLUGIN_COST * 100}%)`,
      table(['QGIS Server', 'GetMap/s', 'against without plugin', 'target'], rows),
    ].join('\n');
  } finally {
    for (const server of Object.values(servers)) await server.stop();
    await stack.stop();
  }
}
