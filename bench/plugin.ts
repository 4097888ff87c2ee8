/**
 * What the monitoring plugin costs a qgis_mapserver drawing GetMaps (API up, API down), against the
 * same QGIS Server without it; the target is 1%.
 *
 * On a shared machine throughput follows the other load, so the main figure is the CPU time the
 * QGIS Server process spends per map, compared round by round: in each round every server draws
 * the same number of maps, in turn, and each plugin server's figure is divided by the plain
 * server's of the same round; medians and the spread of the rounds are reported. Beside it, where
 * `perf` may watch the process, the share of its CPU samples in Python, which in these servers is
 * the plugin alone.
 *
 * STEWARD_BENCH_OTHER_PLUGIN=<folder holding another steward_monitor> adds a server running that
 * copy (API down), to compare two versions of the plugin in the same rounds.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';

import { freePort } from '../src/runtime/ports.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { makeFixtures } from '../test/support/fixtures.js';
import { startStack } from '../test/support/stack.js';
import { warmUp } from './closed-loop.js';
import { cpuSeconds } from './cpu.js';
import { pythonShare } from './python-share.js';
import { median, ms, ratios, spread, table } from './stats.js';

const PLUGIN_PATH = join(import.meta.dirname, '..', 'plugin');
const ROUNDS = 9;
const CONNECTIONS = 4;
const MAPS_PER_CONNECTION = 50;
const MAPS_PER_RUN = CONNECTIONS * MAPS_PER_CONNECTION;
/** The share of GetMap throughput the plugin may cost (issue 22's target). */
const PLUGIN_COST = 0.01;
const WARM_UP_MAPS_PER_CONNECTION = 5;
/** The run under perf draws more maps: the plugin's share is small, and wants many samples. */
const SAMPLED_RUNS = 3;
const BASELINE = 'without plugin';

interface Run {
  perSecond: number;
  cpuMsPerMap: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

function isPng(body: Buffer): void {
  if (!body.subarray(0, 4).equals(PNG_SIGNATURE)) throw new Error(`not a PNG: ${body.toString('utf8', 0, 200)}`);
}

/** `maps` maps from each of CONNECTIONS connections, every one answered with a PNG. */
const drawMaps = (url: string, maps = MAPS_PER_CONNECTION): Promise<void> => warmUp(url, CONNECTIONS, maps, isPng);

/** Draws MAPS_PER_RUN maps from `server`; every one is waited for, so all of its CPU is counted. */
async function measure(url: string, server: QgisServerProcess): Promise<Run> {
  const pids = server.child.pid === undefined ? [] : [server.child.pid];
  const cpuBefore = cpuSeconds(pids);
  const started = performance.now();
  await drawMaps(url);
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: MAPS_PER_RUN / seconds, cpuMsPerMap: ((cpuSeconds(pids) - cpuBefore) * 1000) / MAPS_PER_RUN };
}

const percent = (values: number[]): string => `${median(values).toFixed(1)}% (${spread(values, 1, '%')})`;
const met = (cost: number): string => (cost <= PLUGIN_COST * 100 ? 'met' : 'not met');

function row(name: string, runs: Run[], baseline: Run[], share: number | undefined): string[] {
  const perSecond = runs.map((run) => run.perSecond);
  const cpu = runs.map((run) => run.cpuMsPerMap);
  const shareText = share === undefined ? 'not measured' : `${(share * 100).toFixed(2)}%`;
  const head = [name, median(perSecond).toFixed(1), ms(median(cpu)), shareText];
  if (name === BASELINE) return [...head, '', '', ''];
  const cpuAdded = ratios(
    cpu,
    baseline.map((run) => run.cpuMsPerMap),
  ).map((ratio) => (ratio - 1) * 100);
  const lost = ratios(
    perSecond,
    baseline.map((run) => run.perSecond),
  ).map((ratio) => (1 - ratio) * 100);
  const verdicts = [`CPU ${met(median(cpuAdded))}`, `throughput ${met(median(lost))}`];
  if (share !== undefined) verdicts.push(`Python ${met(share * 100)}`);
  return [...head, percent(cpuAdded), percent(lost), verdicts.join(', ')];
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
  const other = process.env.STEWARD_BENCH_OTHER_PLUGIN;
  const servers: Record<string, QgisServerProcess> = {
    [BASELINE]: await QgisServerProcess.start(),
    'plugin, API up': await QgisServerProcess.start({ env: plugin(monitoringPort) }),
    'plugin, API down': await QgisServerProcess.start({ env: plugin(await freePort()) }),
  };
  if (other) {
    const env = { ...plugin(await freePort()), QGIS_PLUGINPATH: other };
    servers[`plugin of ${other}, API down`] = await QgisServerProcess.start({ env });
  }
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
    const list = Object.entries(servers).map(([name, server]) => ({ name, server, url: target(server) }));
    for (const { url: serverUrl } of list) await drawMaps(serverUrl, WARM_UP_MAPS_PER_CONNECTION);
    const loadBefore = loadavg()[0] ?? 0;
    const runs = new Map<string, Run[]>(list.map(({ name }) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (let turn = 0; turn < list.length; turn++) {
        const next = list[(turn + round) % list.length];
        if (next) runs.get(next.name)?.push(await measure(next.url, next.server));
      }
    }
    const shares = new Map<string, number | undefined>();
    for (const { name, server, url: serverUrl } of list) {
      const pid = server.child.pid;
      const work = () => drawMaps(serverUrl, SAMPLED_RUNS * MAPS_PER_CONNECTION);
      shares.set(name, pid === undefined ? undefined : await pythonShare(pid, work));
    }
    const baseline = runs.get(BASELINE) ?? [];
    const rows = list.map(({ name }) => row(name, runs.get(name) ?? [], baseline, shares.get(name)));
    return [
      `## What the monitoring plugin costs GetMap on one qgis_mapserver (target: within ${PLUGIN_COST * 100}%)`,
      `- ${ROUNDS} rounds; in each, every server draws ${MAPS_PER_RUN} maps in turn (${CONNECTIONS} connections), after ${CONNECTIONS * WARM_UP_MAPS_PER_CONNECTION} maps each`,
      `- CPU per map: user and system time of the qgis_mapserver process over a run, per map; the main figure, as on a shared machine throughput is noisy`,
      `- added and lost: each round's figure against the plain server's in the same round; median (lowest to highest round)`,
      `- Python: share of the process's CPU samples (perf, ${SAMPLED_RUNS * MAPS_PER_RUN} maps, call stacks through the Python interpreter, sip, PyQt or PyQGIS) in one more run of each server; the plugin is the only Python in these servers`,
      `- load average of the machine before the bench: ${loadBefore.toFixed(2)}`,
      '',
      table(
        [
          'QGIS Server',
          'GetMap/s, median',
          'CPU ms per map, median',
          'Python in the CPU samples',
          'CPU per map added',
          'GetMap/s lost',
          `target: within ${PLUGIN_COST * 100}%`,
        ],
        rows,
      ),
    ].join('\n');
  } finally {
    for (const server of Object.values(servers)) await server.stop();
    await stack.stop();
  }
}
