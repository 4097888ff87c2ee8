/**
 * GetMap throughput of QGIS Server with the monitoring plugin (API up, API down) against the same
 * QGIS Server without it: the plugin must not slow rendering. Beside throughput, which another
 * load on the machine moves, each run counts the CPU time the QGIS Server process spent per map.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';

import autocannon from 'autocannon';

import { freePort } from '../src/runtime/ports.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { makeFixtures } from '../test/support/fixtures.js';
import { startStack } from '../test/support/stack.js';
import { cpuSeconds } from './cpu.js';
import { ms, summarise, table } from './stats.js';

const PLUGIN_PATH = join(import.meta.dirname, '..', 'plugin');
const ROUNDS = 5;
/** The share of GetMap throughput the plugin may cost (issue 22's target). */
const PLUGIN_COST = 0.01;
const WARM_UP_REQUESTS = 20;

interface Run {
  perSecond: number;
  cpuMsPerMap: number;
}

async function measure(url: string, server: QgisServerProcess): Promise<Run> {
  const pids = server.child.pid === undefined ? [] : [server.child.pid];
  const cpuBefore = cpuSeconds(pids);
  const result = await autocannon({ url, connections: 4, duration: 6 });
  // A request cut off when the run ends counts as an error; failed answers do not happen here.
  if (result.non2xx > 0) throw new Error(`QGIS Server failed ${result.non2xx} GetMap requests`);
  return { perSecond: result.requests.average, cpuMsPerMap: ((cpuSeconds(pids) - cpuBefore) * 1000) / result['2xx'] };
}

const median = (values: number[]): number => summarise(values).median;
const against = (value: number, baseline: number): string => `${((value / baseline - 1) * 100).toFixed(1)}%`;

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
    const target = (server: QgisServerProcess) => new URL(path.pathname + path.search, server.url).toString();
    const names = Object.keys(servers) as (keyof typeof servers)[];
    for (const name of names)
      await autocannon({ url: target(servers[name]), connections: 4, amount: WARM_UP_REQUESTS });
    const loadBefore = loadavg()[0] ?? 0;
    const runs = new Map<string, Run[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of names.map((_, index) => names[(index + round) % names.length] ?? 'without plugin')) {
        const run = await measure(target(servers[name]), servers[name]);
        runs.set(name, [...(runs.get(name) ?? []), run]);
      }
    }
    const medians = names.map((name) => {
      const each = runs.get(name) ?? [];
      return [name, median(each.map((run) => run.perSecond)), median(each.map((run) => run.cpuMsPerMap))] as const;
    });
    const [, baseRate = Number.NaN, baseCpu = Number.NaN] = medians[0] ?? [];
    const met = (cost: number) => (cost <= PLUGIN_COST ? 'met' : 'not met');
    const rows = medians.map(([name, rate, cpu]) => [
      name,
      rate.toFixed(1),
      against(rate, baseRate),
      ms(cpu),
      against(cpu, baseCpu),
      name === 'without plugin'
        ? ''
        : `within ${PLUGIN_COST * 100}%: throughput ${met(1 - rate / baseRate)}, CPU ${met(cpu / baseCpu - 1)}`,
    ]);
    return [
      `## GetMap throughput of QGIS Server with the monitoring plugin (target: within ${PLUGIN_COST * 100}%)`,
      `- ${ROUNDS} rounds of 6 s per server, in turn, 4 connections, after ${WARM_UP_REQUESTS} maps each; medians`,
      `- CPU per map: user and system time of the qgis_mapserver process over a run, per map; on a shared machine throughput is noisy, CPU per map much less so`,
      `- load average of the machine before the bench: ${loadBefore.toFixed(2)}`,
      '',
      table(
        ['QGIS Server', 'GetMap/s', 'against without plugin', 'CPU ms per map', 'against without plugin', 'target'],
        rows,
      ),
    ].join('\n');
  } finally {
    for (const server of Object.values(servers)) await server.stop();
    await stack.stop();
  }
}
