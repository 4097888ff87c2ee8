/**
 * The pool under kills, as an operator's stack meets them: clients ask maps of a project through
 * nginx (/ows/) and through the API (its own FastCGI path) while pool processes are SIGKILLed. One
 * process of two is killed, 50 times; then both, 10 times. Reported: the requests that failed on
 * each path, and how long each path stayed down after the pool answered again.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { fcgiServerAddresses, type QgisFcgiPool } from '../src/runtime/qgis-fcgi-pool.js';
import { FastcgiQgisClient } from '../src/transport/qgis-fastcgi.js';
import { makeFixtures } from '../test/support/fixtures.js';
import { directStatus, firstAnswer, type Load, mapStatus, underLoad } from '../test/support/pool-load.js';
import { type Stack, startStack } from '../test/support/stack.js';
import { until } from '../test/support/wait.js';
import { median, ms, table } from './stats.js';

const SINGLE_KILLS = 50;
const DOUBLE_KILLS = 10;
/** Clients on each path. */
const CLIENTS = 2;
/**
 * A kill every 3.5 s, alternating: each process has served over 5 s when it is killed, so the
 * supervisor starts it again at once (its back-off is for processes that fail as they start).
 */
const KILL_INTERVAL_MS = 3_500;

interface Paths {
  nginx: string;
  api: string;
}

interface Outcome {
  sent: number;
  failed: number;
}

async function samplePaths(stack: Stack): Promise<Paths> {
  const fixtures = makeFixtures();
  await stack.call('POST', '/api/projects', { name: 'kills', author: 'bench' });
  await stack.call('POST', '/api/projects/kills/layers', {
    type: 'raster',
    name: 'dem',
    datasource: fixtures.floatTiff,
  });
  const { body } = await stack.call('GET', '/api/projects/kills/layers/dem/map/url');
  return { nginx: (body as { url: string }).url, api: `${stack.api.url}/api/projects/kills/layers/dem/map` };
}

/** Every process of the pool accepts again, none of the killed ones among them. */
async function whole(pool: QgisFcgiPool, killed: number[], processes: number): Promise<void> {
  await until(
    'the killed processes to be started again',
    async () => pool.pids.length === processes && !pool.pids.some((pid) => killed.includes(pid)),
    60_000,
  );
  await until('the pool to accept', () => pool.accepting(), 60_000);
}

function loads(paths: Paths): Record<keyof Paths, Load> {
  return {
    nginx: underLoad(() => mapStatus(paths.nginx), CLIENTS),
    api: underLoad(() => mapStatus(paths.api), CLIENTS),
  };
}

async function stopped(running: Record<keyof Paths, Load>): Promise<Record<keyof Paths, Outcome>> {
  const [nginx, api] = await Promise.all([running.nginx.stop(), running.api.stop()]);
  return {
    nginx: { sent: nginx.sent, failed: nginx.failed.length },
    api: { sent: api.sent, failed: api.failed.length },
  };
}

/** 50 kills of one process of two, round robin, under load on both paths. */
async function singleKills(pool: QgisFcgiPool, paths: Paths): Promise<Record<keyof Paths, Outcome>> {
  const running = loads(paths);
  for (let kill = 0; kill < SINGLE_KILLS; kill++) {
    const victim = pool.pids[kill % pool.pids.length] as number;
    process.kill(victim, 'SIGKILL');
    await Promise.all([whole(pool, [victim], 2), sleep(KILL_INTERVAL_MS)]);
  }
  return stopped(running);
}

/** Both processes killed: how long after the pool answers again each path answers too. */
async function doubleKills(pool: QgisFcgiPool, paths: Paths): Promise<Record<keyof Paths, number[]>> {
  const direct = new FastcgiQgisClient(fcgiServerAddresses(pool.fcgiPorts));
  const outages: Record<keyof Paths, number[]> = { nginx: [], api: [] };
  for (let kill = 0; kill < DOUBLE_KILLS; kill++) {
    const victims = pool.pids;
    for (const pid of victims) process.kill(pid, 'SIGKILL');
    await until('both processes to be gone', async () => !(await pool.accepting()), 30_000);
    const [poolBack, nginxBack, apiBack] = await Promise.all([
      firstAnswer(() => directStatus(direct, paths.nginx)),
      firstAnswer(() => mapStatus(paths.nginx)),
      firstAnswer(() => mapStatus(paths.api)),
    ]);
    outages.nginx.push(Math.max(0, nginxBack - poolBack));
    outages.api.push(Math.max(0, apiBack - poolBack));
    await Promise.all([whole(pool, victims, 2), sleep(2 * KILL_INTERVAL_MS)]);
  }
  return outages;
}

function report(single: Record<keyof Paths, Outcome>, outages: Record<keyof Paths, number[]>): string {
  const failedRow = (path: keyof Paths, name: string): string[] => {
    const { sent, failed } = single[path];
    return [name, `${failed} of ${sent}`, '0', failed === 0 ? 'met' : 'NOT met'];
  };
  const outageRow = (path: keyof Paths, name: string): string[] => {
    const longest = Math.max(...outages[path]);
    return [
      name,
      `${ms(median(outages[path]))} ms (longest ${ms(longest)} ms)`,
      '<= 2 s',
      longest <= 2000 ? 'met' : 'NOT met',
    ];
  };
  return [
    `## The pool under kills (2 qgis_mapserv.fcgi processes, ${CLIENTS} clients a path)`,
    table(
      ['measure', 'measured', 'target', 'verdict'],
      [
        failedRow('nginx', `maps failed through nginx, ${SINGLE_KILLS} kills of one process`),
        failedRow('api', `maps failed through the API, ${SINGLE_KILLS} kills of one process`),
        outageRow('nginx', `nginx down after the pool is back, ${DOUBLE_KILLS} kills of both (median)`),
        outageRow('api', `API down after the pool is back, ${DOUBLE_KILLS} kills of both (median)`),
      ],
    ),
  ].join('\n\n');
}

export async function runPoolKillsBench(): Promise<string> {
  const stack = await startStack({}, {}, 'filesystem', 'production');
  try {
    const pool = stack.pool;
    if (!pool) throw new Error('the production stack has a pool');
    const paths = await samplePaths(stack);
    for (const url of [paths.nginx, paths.api]) if ((await mapStatus(url)) !== 200) throw new Error(`no map at ${url}`);
    const single = await singleKills(pool, paths);
    return report(single, await doubleKills(pool, paths));
  } finally {
    await stack.stop();
  }
}
