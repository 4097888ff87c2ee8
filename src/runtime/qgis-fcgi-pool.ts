/**
 * QGIS Server the production way: one qgis_mapserv.fcgi process on each of `fcgiPorts`, started
 * by spawn-fcgi on that loopback FastCGI port, behind nginx configured from the repository's
 * deploy/nginx.conf and deploy/nginx-qgis-server.conf; the API reaches the same ports over
 * FastCGI (STEWARD_QGISSERVER_FCGI). With access control on, the same nginx may serve MapProxy,
 * asking the API about each request (deploy/nginx-mapproxy.conf). Each process loads the server
 * plugins at start, so each registers with Steward as an instance of its own. Every process and
 * nginx are supervised: one that exits is started again (supervisor.ts).
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { childEnvironment, ConfigError, qgisRequestSettings, type ServerAddress } from '../config.js';
import { accepts, freePort } from './ports.js';
import { qgisServerEnvironment } from './qgis-server.js';
import { type SupervisedChild, Supervisor } from './supervisor.js';

export const FCGI_PROGRAM = '/usr/lib/cgi-bin/qgis_mapserv.fcgi';
/** Where the FastCGI processes listen: loopback, reached only by nginx and the API. */
const FCGI_HOST = '127.0.0.1';
const START_TIMEOUT_MS = 30_000;

export interface QgisFcgiPoolOptions {
  /** deploy/ of the checkout: nginx.conf and nginx-qgis-server.conf. */
  deployDir: string;
  /** Where the rendered configuration, nginx's pid and temporary files go. */
  runDir: string;
  /** The FastCGI port of each process, one process a port (distinctFreePorts gives free ones). */
  fcgiPorts: readonly number[];
  /** The program and its first arguments, when not the system's qgis_mapserv.fcgi (another QGIS release). */
  program?: readonly string[];
  host?: string;
  port?: number;
  /** Extra environment of the QGIS Server processes (the plugin's settings). */
  env?: NodeJS.ProcessEnv;
  onLog?: (line: string) => void;
  /** What nginx sends with each request as FastCGI parameters; by default the settings of the processes' environment. */
  requestSettings?: ReadonlyArray<readonly [string, string]>;
  /**
   * Steward's API (`host:port`) when access control is on: nginx asks it about each request
   * (auth_request) and hands QGIS Server the caller's rules. Without it, QGIS Server serves everyone.
   */
  stewardApi?: string;
  /** With `stewardApi`: nginx serves MapProxy too, asking the API about each request (deploy/nginx-mapproxy.conf). */
  tilesGate?: TilesGate;
  /** The address clients reach the pool at (STEWARD_PUBLIC_OWS_URL), which QGIS Server's documents advertise. */
  publicUrl?: string;
  /** Supervises the processes (the launcher's, which logs and counts restarts); one of the pool's own if not given. */
  supervisor?: Supervisor;
  /**
   * Whether the pool starts its processes (the default), or only an nginx in front of the
   * processes another pool runs on `fcgiPorts`, with settings of its own.
   */
  startProcesses?: boolean;
}

/** MapProxy behind nginx's access check: where nginx serves it to clients, and where it listens itself (loopback). */
export interface TilesGate {
  listen: string;
  mapproxy: string;
}

/** `${NAME}` in `template` replaced by `values[NAME]`, as envsubst does; an unknown name is an error. */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\$\{([A-Z_]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for \${${name}} in the configuration template`);
    return value;
  });
}

/** The command of one process of the pool, as deploy/systemd/steward-qgis-fcgi@.service runs it too. */
export function fcgiCommand(port: number | string, program: readonly string[] = [FCGI_PROGRAM]): [string, string[]] {
  return ['spawn-fcgi', ['-n', '-a', FCGI_HOST, '-p', String(port), '--', ...program]];
}

/**
 * The `fastcgi_param` lines with which nginx sends `settings` (config's qgisRequestSettings of
 * the pool's environment) with every request: QGIS Server's environment while it serves one.
 */
export function nginxFastcgiParams(settings: ReadonlyArray<readonly [string, string]>): string {
  return settings
    .map(([name, value]) => {
      // nginx reads `$` as a variable and has no escape for it.
      if (/["\\$\p{Cc}]/u.test(value)) {
        throw new ConfigError(
          `${name} cannot be passed through nginx: its value holds ", \\, $ or a control character`,
        );
      }
      return `fastcgi_param ${name} "${value}";`;
    })
    .join(' ');
}

/** Where nginx serves QGIS Server (deploy/nginx-qgis-server.conf). */
const OWS_PATH = '/ows/';

/**
 * The request headers, as FastCGI parameters, with which QGIS Server advertises `publicUrl` in its
 * capabilities: it takes the host and scheme from Forwarded (then X-Forwarded-Host and -Proto),
 * which nginx's own parameters keep a client from setting, and the path from the request.
 */
export function forwardingSettings(publicUrl: string): Array<[string, string]> {
  const url = new URL(publicUrl);
  if (url.pathname !== OWS_PATH) {
    throw new ConfigError(
      `STEWARD_PUBLIC_OWS_URL must have the path ${OWS_PATH}, nginx's, which QGIS Server advertises as it is asked on: not "${publicUrl}"`,
    );
  }
  const proto = url.protocol.slice(0, -1);
  return [
    ['HTTP_FORWARDED', `host=${url.host};proto=${proto}`],
    ['HTTP_X_FORWARDED_HOST', url.host],
    ['HTTP_X_FORWARDED_PROTO', proto],
  ];
}

/**
 * QGIS_ACCESS_CHECK and QGIS_ACCESS_API: nginx's auth_request to the API at `stewardApi`, or none
 * (the internal location is then never used, and names Steward's default address).
 */
export function nginxAccessCheck(stewardApi: string | undefined): {
  QGIS_ACCESS_CHECK: string;
  QGIS_ACCESS_API: string;
} {
  return stewardApi === undefined
    ? { QGIS_ACCESS_CHECK: '', QGIS_ACCESS_API: '127.0.0.1:5000' }
    : { QGIS_ACCESS_CHECK: 'auth_request /_steward_access;', QGIS_ACCESS_API: stewardApi };
}

/**
 * TILES_INCLUDE (deploy/nginx.conf's include of nginx-mapproxy.conf, rendered into `runDir`, or
 * nothing) and the values nginx-mapproxy.conf is rendered with: `gate` asking the API at `stewardApi`.
 */
function nginxTilesGate(
  runDir: string,
  stewardApi: string | undefined,
  gate: TilesGate | undefined,
): Record<string, string> {
  if (gate === undefined) return { TILES_INCLUDE: '' };
  if (stewardApi === undefined) throw new Error("MapProxy behind nginx's check needs the API nginx asks (stewardApi)");
  return {
    TILES_INCLUDE: `include ${join(runDir, TILES_CONFIG)};`,
    TILES_LISTEN: gate.listen,
    TILES_MAPPROXY: gate.mapproxy,
    TILES_ACCESS_API: stewardApi,
  };
}

/** The upstream servers of nginx for the processes on `ports`: never held out after a failure (max_fails=0). */
export function nginxFcgiServers(ports: readonly (number | string)[]): string {
  return ports.map((port) => `server ${FCGI_HOST}:${port} max_fails=0;`).join(' ');
}

/** A folder of `runDir` only its user may enter (0700), as Qt wants its XDG_RUNTIME_DIR. */
function privateRuntimeDir(runDir: string): string {
  const dir = join(runDir, 'xdg-runtime');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

/** MapProxy's server block (deploy/), which nginx.conf includes when it is rendered. */
const TILES_CONFIG = 'nginx-mapproxy.conf';

/** deploy/'s nginx.conf, nginx-qgis-server.conf and (TILES_INCLUDE) nginx-mapproxy.conf rendered into `runDir`; returns the main file. */
function writeNginxConfig(deployDir: string, runDir: string, values: Readonly<Record<string, string>>): string {
  mkdirSync(runDir, { recursive: true });
  for (const name of ['nginx.conf', 'nginx-qgis-server.conf', ...(values['TILES_INCLUDE'] ? [TILES_CONFIG] : [])]) {
    writeFileSync(join(runDir, name), renderTemplate(readFileSync(join(deployDir, name), 'utf8'), values));
  }
  return join(runDir, 'nginx.conf');
}

export class QgisFcgiPool {
  private constructor(
    readonly url: string,
    private readonly processes: SupervisedChild[],
    private readonly nginx: SupervisedChild,
    private readonly ports: readonly number[],
    private readonly ownSupervisor: Supervisor | undefined,
  ) {}

  static async start(options: QgisFcgiPoolOptions): Promise<QgisFcgiPool> {
    const host = options.host ?? '127.0.0.1';
    const port = options.port ?? (await freePort(host));
    const env = qgisServerEnvironment({ XDG_RUNTIME_DIR: privateRuntimeDir(options.runDir), ...options.env });
    const ports = options.fcgiPorts;
    const supervisor = options.supervisor ?? new Supervisor();
    const ownSupervisor = supervisor === options.supervisor ? undefined : supervisor;
    const processes = (options.startProcesses === false ? [] : ports).map((fcgiPort) => {
      const [command, args] = fcgiCommand(fcgiPort, options.program);
      return supervisor.start({ name: `qgis-fcgi:${fcgiPort}`, command, args, env, ...lineListener(options) });
    });
    const config = writeNginxConfig(options.deployDir, options.runDir, {
      NGINX_USER: userInfo().username,
      STEWARD_RUN_DIR: options.runDir,
      QGIS_LISTEN: `${host}:${port}`,
      QGIS_FCGI_SERVERS: nginxFcgiServers(ports),
      QGIS_FCGI_PARAMS: nginxFastcgiParams([
        ...(options.requestSettings ?? qgisRequestSettings(env)),
        ...(options.publicUrl === undefined ? [] : forwardingSettings(options.publicUrl)),
      ]),
      ...nginxAccessCheck(options.stewardApi),
      ...nginxTilesGate(options.runDir, options.stewardApi, options.tilesGate),
    });
    const nginx = supervisor.start({
      name: 'nginx',
      command: 'nginx',
      args: ['-e', 'stderr', '-p', options.runDir, '-c', config],
      env: childEnvironment(),
      ...lineListener(options),
    });
    const pool = new QgisFcgiPool(`http://${host}:${port}${OWS_PATH}`, processes, nginx, ports, ownSupervisor);
    try {
      await pool.waitUntilReady(host, port);
    } catch (error) {
      await pool.stop();
      throw error;
    }
    return pool;
  }

  /** What nginx and the QGIS Server processes have logged recently (see ChildLog). */
  get log(): readonly string[] {
    return [...this.nginx.log, ...this.processes.flatMap((each) => each.log)];
  }

  /** The FastCGI port of each process. */
  get fcgiPorts(): number[] {
    return [...this.ports];
  }

  /** The process ids of the QGIS Server processes now running, in the order of `fcgiPorts` while every one runs. */
  get pids(): number[] {
    return this.processes.flatMap((each) => (each.pid === undefined ? [] : [each.pid]));
  }

  /** nginx's master process, while it runs. */
  get nginxPid(): number | undefined {
    return this.nginx.pid;
  }

  /** Whether every process of the pool accepts FastCGI connections. */
  async accepting(): Promise<boolean> {
    return (await Promise.all(this.ports.map((fcgiPort) => accepts(FCGI_HOST, fcgiPort)))).every(Boolean);
  }

  private async waitUntilReady(host: string, port: number): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (this.nginx.exitCode !== undefined && this.nginx.exitCode !== null) {
        throw new Error(`nginx exited with ${this.nginx.exitCode}: ${this.log.join('\n')}`);
      }
      if ((await accepts(host, port)) && (await this.accepting())) return;
      await sleep(100);
    }
    throw new Error(`the QGIS Server pool did not answer within ${START_TIMEOUT_MS / 1000} seconds`);
  }

  async stop(): Promise<void> {
    await this.nginx.stop();
    await Promise.all(this.processes.map((each) => each.stop()));
    await this.ownSupervisor?.stop();
  }
}

function lineListener(options: QgisFcgiPoolOptions): { onLine?: (line: string) => void } {
  return options.onLog ? { onLine: options.onLog } : {};
}

/** The address of each of the pool's processes on `ports`. */
export function fcgiServerAddresses(ports: readonly number[]): ServerAddress[] {
  return ports.map((port) => ({ host: FCGI_HOST, port }));
}

/** The addresses of the pool's processes on `ports`, as STEWARD_QGISSERVER_FCGI lists them. */
export function fcgiAddresses(ports: readonly number[]): string {
  return fcgiServerAddresses(ports)
    .map(({ host, port }) => `${host}:${port}`)
    .join(',');
}

/** `count` free ports, all different. */
export async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
