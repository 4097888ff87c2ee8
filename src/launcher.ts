#!/usr/bin/env node
/**
 * `npm start`: the embedded default. Starts what the environment does not point elsewhere (a
 * loopback QGIS Server with the monitoring plugin, a projects folder in the checkout, MapProxy with
 * the tile cache in the checkout), then the API, and says where each listens. QGIS Server and
 * MapProxy run the production way, from the files of deploy/ (a pool of qgis_mapserv.fcgi behind
 * nginx, MapProxy under gunicorn); STEWARD_DEV_SERVERS=1 runs their development servers instead.
 * Every process it starts, of either stack, is supervised (runtime/supervisor.ts): started again
 * when it exits, counted in /metrics, its lines in Steward's log.
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ConfigError, heapBoundMb, loadConfig } from './config.js';
import { runBounded } from './runtime/heap-bound.js';
import { MapProxyProcess } from './runtime/mapproxy.js';
import { freePort } from './runtime/ports.js';
import {
  distinctFreePorts,
  fcgiAddresses,
  forwardingSettings,
  QgisFcgiPool,
  type TilesGate,
} from './runtime/qgis-fcgi-pool.js';
import { startSupervisedMapserver } from './runtime/qgis-server.js';
import { Supervisor } from './runtime/supervisor.js';

const checkout = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const deploy = join(checkout, 'deploy');

/** How many qgis_mapserv.fcgi processes: STEWARD_QGIS_PROCESSES, by default one per core. */
function qgisProcesses(env: NodeJS.ProcessEnv): number {
  const text = env['STEWARD_QGIS_PROCESSES'];
  if (text === undefined || text === '') return availableParallelism();
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1 || count > 256) {
    throw new ConfigError(`STEWARD_QGIS_PROCESSES must be a whole number from 1 to 256, not "${text}"`);
  }
  return count;
}

/**
 * QGIS Server on `port` with the monitoring plugin: the FastCGI pool, its processes on
 * `fcgiPorts`, or the development server when those are not given.
 */
async function startQgisServer(
  env: NodeJS.ProcessEnv,
  port: number,
  fcgiPorts: number[] | undefined,
  supervisor: Supervisor,
  stewardApi: string | undefined,
  publicUrl: string | undefined,
  tilesGate: TilesGate | undefined,
): Promise<{ stop(): Promise<void> }> {
  const pluginEnv = {
    QGIS_PLUGINPATH: join(checkout, 'plugin'),
    STEWARD_HOST: '127.0.0.1',
    STEWARD_PORT: env['STEWARD_QGISSERVER_MONITORING_PORT'],
    STEWARD_MONITORING_TOKEN: env['STEWARD_MONITORING_TOKEN'] ?? '',
  };
  if (fcgiPorts === undefined) return startSupervisedMapserver(supervisor, { port, env: pluginEnv });
  return QgisFcgiPool.start({
    deployDir: deploy,
    runDir: join(dataDir(env), 'run'),
    fcgiPorts,
    port,
    env: pluginEnv,
    supervisor,
    ...(stewardApi !== undefined && { stewardApi }),
    ...(publicUrl !== undefined && { publicUrl }),
    ...(tilesGate !== undefined && { tilesGate }),
  });
}

/** Where the embedded default keeps its projects, uploads, tile cache and run files: STEWARD_DATA_DIR. */
function dataDir(env: NodeJS.ProcessEnv): string {
  return env['STEWARD_DATA_DIR'] || join(checkout, 'data');
}

async function main(): Promise<void> {
  const env = { ...process.env };
  const stops: Array<() => Promise<void>> = [];
  env['STEWARD_QGISSERVER_PROJECTS_DIR'] ??= join(dataDir(env), 'projects');
  mkdirSync(env['STEWARD_QGISSERVER_PROJECTS_DIR'], { recursive: true });
  // The demo dataset scripts/setup.sh writes is offered in the datasource browser.
  const demo = join(checkout, 'data', 'demo');
  // Published projects' data files go to the upload root, which must be a data root too.
  env['STEWARD_UPLOAD_ROOT'] ??= join(dataDir(env), 'uploads');
  mkdirSync(env['STEWARD_UPLOAD_ROOT'], { recursive: true });
  const roots = (env['STEWARD_DATA_ROOTS'] ?? '').split(':').filter((root) => root !== '');
  for (const root of [demo, env['STEWARD_UPLOAD_ROOT']]) if (!roots.includes(root)) roots.push(root);
  env['STEWARD_DATA_ROOTS'] = roots.join(':');
  env['STEWARD_QGISSERVER_MONITORING_PORT'] ??= String(await freePort());
  const ownQgisPort = env['STEWARD_QGISSERVER_URL'] ? undefined : await freePort();
  if (ownQgisPort !== undefined) env['STEWARD_QGISSERVER_URL'] = `http://127.0.0.1:${ownQgisPort}/ows/`;
  // Clients reach our QGIS Server at nginx (or the development server) unless another address is given.
  if (ownQgisPort !== undefined) env['STEWARD_PUBLIC_OWS_URL'] ||= env['STEWARD_QGISSERVER_URL'];
  // The API sends its maps straight to the pool's FastCGI processes, whose ports it must know first.
  const fcgiPorts =
    ownQgisPort === undefined || env['STEWARD_DEV_SERVERS'] === '1'
      ? undefined
      : await distinctFreePorts(qgisProcesses(env));
  if (fcgiPorts !== undefined) env['STEWARD_QGISSERVER_FCGI'] = fcgiAddresses(fcgiPorts);
  // Tile cache: on by default, served by a MapProxy of our own unless a folder is given.
  const ownMapproxyDir = env['STEWARD_MAPPROXY_PROJECTS_DIR'] ? undefined : join(dataDir(env), 'mapproxy');
  if (ownMapproxyDir !== undefined) env['STEWARD_MAPPROXY_PROJECTS_DIR'] = ownMapproxyDir;
  // With access control on, our nginx serves MapProxy to clients on a port of its own and asks the
  // API about each request; MapProxy listens on loopback, where the health check asks it (docs/access.md).
  const gated = ownMapproxyDir !== undefined && fcgiPorts !== undefined && Boolean(env['STEWARD_API_TOKEN']);
  const [ownMapproxyPort, gatePort] = ownMapproxyDir === undefined ? [] : await distinctFreePorts(gated ? 2 : 1);
  if (ownMapproxyPort !== undefined) env['STEWARD_MAPPROXY_URL'] = `http://127.0.0.1:${ownMapproxyPort}/`;
  const tilesGate: TilesGate | undefined =
    gatePort === undefined ? undefined : { listen: `127.0.0.1:${gatePort}`, mapproxy: `127.0.0.1:${ownMapproxyPort}` };

  const config = loadConfig(env);
  // nginx has QGIS Server advertise the public address: refused now if it cannot, not after the API started.
  if (fcgiPorts !== undefined && config.publicOwsUrl !== undefined) forwardingSettings(config.publicOwsUrl);
  const { startServer } = await import('./app/server.js');
  const server = await startServer(config);
  stops.push(() => server.close());
  const supervisor = new Supervisor({
    log: server.app.log,
    onRestart: (child) => server.services.metrics.childRestarted(child),
  });
  stops.unshift(() => supervisor.stop());
  let mapproxy: MapProxyProcess | undefined;
  if (ownMapproxyDir !== undefined) {
    mkdirSync(ownMapproxyDir, { recursive: true });
    const started = await MapProxyProcess.start(ownMapproxyDir, {
      env,
      port: ownMapproxyPort,
      supervisor,
      ...(env['STEWARD_DEV_SERVERS'] !== '1' && { gunicornConfig: join(deploy, 'gunicorn.conf.py') }),
    });
    stops.unshift(() => started.stop());
    mapproxy = started;
  }
  if (ownQgisPort !== undefined) {
    // Started after the API, so that the plugin's first connection attempt succeeds.
    // With access control on, nginx asks the API about each request to QGIS Server (docs/access.md).
    const stewardApi = env['STEWARD_API_TOKEN'] ? new URL(server.url).host : undefined;
    const qgis = await startQgisServer(
      env,
      ownQgisPort,
      fcgiPorts,
      supervisor,
      stewardApi,
      config.publicOwsUrl,
      tilesGate,
    );
    stops.unshift(() => qgis.stop());
  }
  console.log(`QGIS Server     ${env['STEWARD_QGISSERVER_URL']}`);
  if (config.publicOwsUrl !== env['STEWARD_QGISSERVER_URL'])
    console.log(`Public OWS      ${config.publicOwsUrl ?? 'not set (STEWARD_PUBLIC_OWS_URL)'}`);
  if (fcgiPorts !== undefined)
    console.log(`QGIS FastCGI    ${env['STEWARD_QGISSERVER_FCGI']} (the API's maps go there)`);
  console.log(`Steward API     ${server.url}/api/projects`);
  console.log(`API reference   ${server.url}/docs`);
  console.log(
    `Monitoring port ${env['STEWARD_QGISSERVER_MONITORING_PORT']} (try: STEWARD_SERVER_URL=${server.url} npx steward ps)`,
  );
  console.log(`Projects        ${env['STEWARD_QGISSERVER_PROJECTS_DIR']}`);
  console.log(`Uploads         ${env['STEWARD_UPLOAD_ROOT']} (data of published projects)`);
  console.log(`Web console     ${server.url}/ (demo data in ${demo})`);
  if (mapproxy) {
    const tiles = tilesGate === undefined ? mapproxy.url : `http://${tilesGate.listen}`;
    const checked = tilesGate === undefined ? '' : `, nginx in front of ${mapproxy.url} asking the API`;
    console.log(
      `MapProxy        ${tiles}/<project>/wmts/1.0.0/WMTSCapabilities.xml (cache in ${ownMapproxyDir}${checked})`,
    );
  }
  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    for (const step of stops) await step().catch(() => undefined);
    process.exit(0);
  };
  // Repeated signals (a terminal's Ctrl-C reaches the launcher too, which passes it on) stop once.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void (stopping ??= stop()));
}

/** Bounds the heap first (see runtime/heap-bound.ts); the bounded process starts everything. */
async function launch(): Promise<void> {
  const exitCode = await runBounded(heapBoundMb(process.env), process.env);
  if (exitCode === undefined) await main();
  else process.exit(exitCode);
}

launch().catch((error: unknown) => {
  console.error(`steward: ${error instanceof ConfigError ? error.message : String(error)}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
