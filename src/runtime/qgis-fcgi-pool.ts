/**
 * QGIS Server the production way: one qgis_mapserv.fcgi process on each of `fcgiPorts`, started
 * by spawn-fcgi on that loopback FastCGI port, behind nginx configured from the repository's
 * deploy/nginx.conf and deploy/nginx-qgis-server.conf; the API reaches the same ports over
 * FastCGI (STEWARD_QGISSERVER_FCGI). Each process loads the server plugins at start, so each
 * registers with Steward as an instance of its own. A process that exits is started again.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { type ServerAddress } from '../config.js';
import { ChildLog } from './child-log.js';
import { accepts, freePort } from './ports.js';
import { qgisServerEnvironment } from './qgis-server.js';

export const FCGI_PROGRAM = '/usr/lib/cgi-bin/qgis_mapserv.fcgi';
/** Where the FastCGI processes listen: loopback, reached only by nginx and the API. */
const FCGI_HOST = '127.0.0.1';
const START_TIMEOUT_MS = 30_000;
const RESTART_DELAY_MS = 1_000;

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

/** One qgis_mapserv.fcgi process, started again whenever it exits until the pool stops. */
class FcgiProcess {
  private child: ChildProcess | undefined;
  private childLog: ChildLog | undefined;
  private stopping = false;

  constructor(
    readonly port: number,
    private readonly program: readonly string[] | undefined,
    private readonly env: NodeJS.ProcessEnv,
    private readonly onLog?: (line: string) => void,
  ) {}

  start(): void {
    const [program, args] = fcgiCommand(this.port, this.program);
    const child = spawn(program, args, {
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.childLog = new ChildLog(child, this.onLog);
    child.once('exit', () => {
      if (!this.stopping) setTimeout(() => this.stopping || this.start(), RESTART_DELAY_MS);
    });
    this.child = child;
  }

  get log(): readonly string[] {
    return this.childLog?.lines ?? [];
  }

  /** The running process's id (spawn-fcgi -n becomes qgis_mapserv.fcgi). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  ready(): Promise<boolean> {
    return accepts(FCGI_HOST, this.port);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.child) await stopChild(this.child);
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

/** deploy/'s nginx.conf and nginx-qgis-server.conf rendered into `runDir`; returns the main file. */
function writeNginxConfig(deployDir: string, runDir: string, values: Readonly<Record<string, string>>): string {
  mkdirSync(runDir, { recursive: true });
  for (const name of ['nginx.conf', 'nginx-qgis-server.conf']) {
    writeFileSync(join(runDir, name), renderTemplate(readFileSync(join(deployDir, name), 'utf8'), values));
  }
  return join(runDir, 'nginx.conf');
}

export class QgisFcgiPool {
  private constructor(
    readonly url: string,
    private readonly processes: FcgiProcess[],
    private readonly nginx: ChildProcess,
    private readonly nginxLog: ChildLog,
  ) {}

  static async start(options: QgisFcgiPoolOptions): Promise<QgisFcgiPool> {
    const host = options.host ?? '127.0.0.1';
    const port = options.port ?? (await freePort(host));
    const env = qgisServerEnvironment(options.env);
    const ports = options.fcgiPorts;
    const processes = ports.map((fcgiPort) => new FcgiProcess(fcgiPort, options.program, env, options.onLog));
    for (const each of processes) each.start();
    const config = writeNginxConfig(options.deployDir, options.runDir, {
      NGINX_USER: userInfo().username,
      STEWARD_RUN_DIR: options.runDir,
      QGIS_LISTEN: `${host}:${port}`,
      QGIS_FCGI_SERVERS: ports.map((fcgiPort) => `server ${FCGI_HOST}:${fcgiPort};`).join(' '),
    });
    const nginx = spawn('nginx', ['-e', 'stderr', '-p', options.runDir, '-c', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pool = new QgisFcgiPool(`http://${host}:${port}/ows/`, processes, nginx, new ChildLog(nginx, options.onLog));
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
    return [...this.nginxLog.lines, ...this.processes.flatMap((each) => each.log)];
  }

  /** The FastCGI port of each process. */
  get fcgiPorts(): number[] {
    return this.processes.map((each) => each.port);
  }

  /** The process ids of the QGIS Server processes now running, in the order of `fcgiPorts` while every one runs. */
  get pids(): number[] {
    return this.processes.flatMap((each) => (each.pid === undefined ? [] : [each.pid]));
  }

  private async waitUntilReady(host: string, port: number): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (this.nginx.exitCode !== null) {
        throw new Error(`nginx exited with ${this.nginx.exitCode}: ${this.log.join('\n')}`);
      }
      const ready = await Promise.all([accepts(host, port), ...this.processes.map((each) => each.ready())]);
      if (ready.every(Boolean)) return;
      await sleep(100);
    }
    throw new Error(`the QGIS Server pool did not answer within ${START_TIMEOUT_MS / 1000} seconds`);
  }

  async stop(): Promise<void> {
    await stopChild(this.nginx);
    await Promise.all(this.processes.map((each) => each.stop()));
  }
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
