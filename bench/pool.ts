/**
 * GetMap throughput of the production QGIS Server of deploy/ (qgis_mapserv.fcgi processes, one per
 * core, behind nginx) against one qgis_mapserver on the same project and cores, and the plugin's
 * cost on the pool.
 *
 * Fair by construction: every server runs with the same settings (parallel rendering off, so one
 * map is drawn by one thread, whichever server draws it); each map takes hundreds of milliseconds of
 * rendering, so the client, nginx and Node stay small beside it (the client's CPU is reported);
 * there are twice as many concurrent clients as pool processes; each server is warmed up (project
 * loaded in every process) before it is measured; and the servers are measured in turn, round after
 * round, each round in a different order, so that a change of load on the machine falls on all of
 * them. Medians and the spread over the rounds are reported.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { InstanceRegistry } from '../src/monitor/registry.js';
import { distinctFreePorts, QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { closedLoop, warmUp } from './closed-loop.js';
import { cpuSeconds } from './cpu.js';
import { closeClient, send } from './http-client.js';
import { makeMapData } from './map-data.js';
import { median, ms, ratios, spread, table, time } from './stats.js';

const REPO = join(import.meta.dirname, '..');
const ROUNDS = 5;
const SECONDS = 10;
/** Requests each client sends before a server is measured: every process has loaded the project. */
const WARM_UP_REQUESTS = 2;
/** The same on every server: one map, one rendering thread. */
const SAME_SETTINGS = { QGIS_SERVER_PARALLEL_RENDERING: 'false', QGIS_SERVER_MAX_THREADS: '1' };
/** The whole photo and its parcels, labelled, reprojected to WGS 84 at 1200 x 1200. */
const GETMAP = {
  SERVICE: 'WMS',
  VERSION: '1.3.0',
  REQUEST: 'GetMap',
  LAYERS: 'photo,parcels',
  STYLES: '',
  CRS: 'EPSG:4326',
  BBOX: '48.8414,2.3356,48.8533,2.3536',
  WIDTH: '1200',
  HEIGHT: '1200',
  FORMAT: 'image/jpeg',
};
const ONE = 'one qgis_mapserver';
const BARE = 'pool, without plugin';
const PLUGIN = 'pool, with plugin';

type Server = QgisServerProcess | QgisFcgiPool;

/** Throws unless `body` is a JPEG: QGIS Server answers a failed GetMap with XML and status 200. */
function checkJpeg(body: Buffer): void {
  if (body[0] !== 0xff || body[1] !== 0xd8) throw new Error(`GetMap failed: ${body.subarray(0, 300).toString()}`);
}

async function writeProject(dir: string): Promise<string> {
  const data = makeMapData(dir);
  const project = join(dir, 'pool.qgs');
  await promisify(execFile)(
    '/usr/bin/python3',
    [join(import.meta.dirname, 'pool_project.py'), project, data.photo, data.parcels],
    {
      env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' },
    },
  );
  return project;
}

function getMapUrl(server: Server, project: string): string {
  const url = new URL(server.url);
  for (const [key, value] of Object.entries({ MAP: project, ...GETMAP })) url.searchParams.set(key, value);
  return url.toString();
}

/** Per server, one figure a round. */
type Rounds = Record<string, number[]>;

interface Measured {
  perSecond: Rounds;
  /** CPU seconds of the server's QGIS Server processes per map drawn. */
  cpuPerMap: Rounds;
  /** Cores the server's QGIS Server processes kept busy during a run. */
  cores: Rounds;
  clientCores: number[];
  singleMapMs: number;
}

function pidsOf(server: Server): number[] {
  return server instanceof QgisFcgiPool ? server.pids : server.child.pid === undefined ? [] : [server.child.pid];
}

async function measure(servers: Record<string, Server>, project: string, clients: number): Promise<Measured> {
  const names = Object.keys(servers);
  const urls = Object.fromEntries(names.map((name) => [name, getMapUrl(servers[name] as Server, project)]));
  for (const name of names) await warmUp(urls[name] as string, clients, WARM_UP_REQUESTS, checkJpeg);
  const single = await time(5, async () => checkJpeg(await send(urls[ONE] as string)));
  const measured: Measured = { perSecond: {}, cpuPerMap: {}, cores: {}, clientCores: [], singleMapMs: single.median };
  for (let round = 0; round < ROUNDS; round++) {
    const order = names.map((_, index) => names[(index + round) % names.length] as string);
    for (const name of order) {
      const pids = pidsOf(servers[name] as Server);
      const cpuBefore = cpuSeconds(pids);
      const run = await closedLoop(urls[name] as string, clients, SECONDS, checkJpeg);
      (measured.perSecond[name] ??= []).push(run.perSecond);
      const cpu = cpuSeconds(pids) - cpuBefore;
      (measured.cpuPerMap[name] ??= []).push(cpu / run.allReplies);
      (measured.cores[name] ??= []).push(cpu / run.seconds);
      measured.clientCores.push(run.clientCores);
    }
  }
  return measured;
}

function setup(measured: Measured, processes: number, clients: number, loadBefore: number): string {
  return [
    `- pool: ${processes} qgis_mapserv.fcgi behind nginx; ${clients} concurrent clients on every server`,
    `- map: ${GETMAP.LAYERS} (4000 x 4000 RGB photo, 4900 parcels) reprojected to ${GETMAP.CRS}, ` +
      `${GETMAP.WIDTH} x ${GETMAP.HEIGHT} ${GETMAP.FORMAT}: ${ms(measured.singleMapMs)} ms a map on one qgis_mapserver with one client`,
    `- every server: QGIS_SERVER_PARALLEL_RENDERING=false, QGIS_SERVER_MAX_THREADS=1 (one rendering thread a map)`,
    `- ${ROUNDS} rounds of ${SECONDS} s per server, in turn, after ${WARM_UP_REQUESTS} requests of each client; median, and lowest to highest round`,
    `- CPU per map: user and system time of the server's QGIS Server processes over a run, per map drawn; cores busy: that time over the run's`,
    `- client and child logs (this process): median ${median(measured.clientCores).toFixed(3)} cores during a run`,
    `- load average of the machine before the bench: ${loadBefore.toFixed(2)}; on a shared machine throughput is noisy, CPU per map much less so`,
  ].join('\n');
}

function serverTable({ perSecond, cpuPerMap, cores }: Measured): string {
  return table(
    ['QGIS Server', 'GetMap/s, median', 'rounds', 'CPU ms per map, median', 'rounds', 'cores busy, median'],
    Object.keys(perSecond).map((name) => {
      const cpuMs = (cpuPerMap[name] ?? []).map((seconds) => seconds * 1000);
      return [
        name,
        median(perSecond[name] ?? []).toFixed(2),
        spread(perSecond[name] ?? [], 2),
        ms(median(cpuMs)),
        spread(cpuMs, 0),
        median(cores[name] ?? []).toFixed(2),
      ];
    }),
  );
}

/** `of` over `against` round by round (both measured in the same round). */
const verdict = (met: boolean): string => (met ? 'met' : 'not met');

/** The pool's speedup, and whether the machine let the pool have its cores to show it. */
function speedupRows({ perSecond, cpuPerMap, cores }: Measured, processes: number): string[][] {
  const speedups = ratios(perSecond[BARE], perSecond[ONE]);
  const cpuRatios = ratios(cpuPerMap[BARE], cpuPerMap[ONE]);
  const target = 0.9 * processes;
  const poolCores = median(cores[BARE] ?? []);
  const busy =
    poolCores < target ? ` (the pool kept ${poolCores.toFixed(2)} of ${processes} cores busy: machine busy)` : '';
  return [
    [
      `GetMap/s, pool of ${processes} / ${ONE}`,
      `${median(speedups).toFixed(2)}x`,
      spread(speedups, 2, 'x'),
      `>= ${target.toFixed(1)}x`,
      verdict(median(speedups) >= target) + busy,
    ],
    [
      `CPU per map, pool / ${ONE} (at most ${(processes / target).toFixed(2)} for ${target.toFixed(1)}x on idle cores)`,
      median(cpuRatios).toFixed(2),
      spread(cpuRatios, 2),
      `<= ${(processes / target).toFixed(2)}`,
      verdict(median(cpuRatios) <= processes / target),
    ],
  ];
}

function pluginRows({ perSecond, cpuPerMap }: Measured): string[][] {
  const costs = ratios(perSecond[PLUGIN], perSecond[BARE]).map((ratio) => (1 - ratio) * 100);
  const cpuCosts = ratios(cpuPerMap[PLUGIN], cpuPerMap[BARE]).map((ratio) => (ratio - 1) * 100);
  const percent = (values: number[]): string[] => [
    `${median(values).toFixed(1)}%`,
    spread(values, 1, '%'),
    '<= 5%',
    verdict(median(values) <= 5),
  ];
  return [
    ['plugin cost on the pool: GetMap/s lost', ...percent(costs)],
    ['plugin cost on the pool: CPU per map added', ...percent(cpuCosts)],
  ];
}

function targetTable(measured: Measured, processes: number): string {
  return table(
    ['measure', 'median', 'rounds', 'target', 'verdict'],
    [...speedupRows(measured, processes), ...pluginRows(measured)],
  );
}

function report(measured: Measured, processes: number, clients: number, loadBefore: number): string {
  return [
    `## GetMap throughput of the FastCGI pool against one qgis_mapserver (${availableParallelism()} cores)`,
    setup(measured, processes, clients, loadBefore),
    serverTable(measured),
    targetTable(measured, processes),
  ].join('\n\n');
}

export async function runPoolBench(): Promise<string> {
  const loadBefore = loadavg()[0] ?? 0;
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-pool-'));
  const registry = new InstanceRegistry();
  const processes = availableParallelism();
  const clients = 2 * processes;
  const pool = async (name: string, env: NodeJS.ProcessEnv = {}): Promise<QgisFcgiPool> =>
    QgisFcgiPool.start({
      deployDir: join(REPO, 'deploy'),
      runDir: join(dir, name),
      fcgiPorts: await distinctFreePorts(processes),
      env: { ...SAME_SETTINGS, ...env },
    });
  const servers: Record<string, Server> = {};
  try {
    const project = await writeProject(dir);
    await registry.start(0, '127.0.0.1');
    servers[ONE] = await QgisServerProcess.start({ env: SAME_SETTINGS });
    servers[BARE] = await pool('bare');
    servers[PLUGIN] = await pool('plugin', {
      QGIS_PLUGINPATH: join(REPO, 'plugin'),
      STEWARD_HOST: '127.0.0.1',
      STEWARD_PORT: String(registry.port),
    });
    return report(await measure(servers, project, clients), processes, clients, loadBefore);
  } finally {
    closeClient();
    for (const server of Object.values(servers)) await server.stop();
    await registry.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
