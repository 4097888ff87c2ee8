import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

import { childEnvironment, QGIS_REQUEST_DEFAULTS } from '../config.js';
import { ChildLog } from './child-log.js';
import { accepts, freePort } from './ports.js';

export interface QgisServerOptions {
  host?: string;
  port?: number;
  /** Extra environment, e.g. QGIS_PLUGINPATH, STEWARD_HOST, STEWARD_PORT. */
  env?: NodeJS.ProcessEnv;
  /** Receives every line QGIS Server writes to stdout/stderr (its log). */
  onLog?: (line: string) => void;
  /** The program and its first arguments, when not `qgis_mapserver` on the PATH (another QGIS release). */
  command?: readonly string[];
  /** How long it may take to listen (30 s unless given; longer under a tool such as valgrind). */
  readyWithinMs?: number;
}

/** What every QGIS Server process runs with: offscreen, logging to stderr (the systemd unit too). */
export const QGIS_SERVER_SETTINGS: Readonly<Record<string, string>> = {
  QT_QPA_PLATFORM: 'offscreen',
  QGIS_SERVER_LOG_STDERR: '1',
  PYTHONDONTWRITEBYTECODE: '1',
};

const DEFAULT_LOG_LEVEL = '1';
const READY_WITHIN_MS = 30_000;

/**
 * What QGIS Server runs with unless the environment says otherwise (the systemd unit too). Log
 * level 1, warnings: at 0 QGIS logs each request's parameters, about twenty lines a map, and the
 * monitoring plugin's Python hears every line; it logs a line per request of its own instead.
 */
export const QGIS_SERVER_DEFAULTS: Readonly<Record<string, string>> = {
  QGIS_SERVER_LOG_LEVEL: DEFAULT_LOG_LEVEL,
  // Read outside FastCGI requests, and by qgis_mapserver: the same as each request's parameters.
  ...QGIS_REQUEST_DEFAULTS,
};

/** The environment of a QGIS Server process: QGIS_SERVER_SETTINGS with `extra` added. */
export function qgisServerEnvironment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return childEnvironment({ ...QGIS_SERVER_SETTINGS, ...extra }, { XDG_RUNTIME_DIR: '/tmp', ...QGIS_SERVER_DEFAULTS });
}

/** What qgis_mapserver prints once it has bound its address (it exits if it cannot). */
const LISTENING = 'QGIS Development Server listening on';

/** A `qgis_mapserver` child process listening on a loopback port. */
export class QgisServerProcess {
  private readonly childLog: ChildLog;

  private constructor(
    private readonly host: string,
    private readonly port: number,
    readonly child: ChildProcess,
    onLog?: (line: string) => void,
  ) {
    this.childLog = new ChildLog(child, onLog);
  }

  get url(): string {
    return `http://${this.host}:${this.port}/ows/`;
  }

  static async start(options: QgisServerOptions = {}): Promise<QgisServerProcess> {
    const host = options.host ?? '127.0.0.1';
    const port = options.port ?? (await freePort(host));
    const [program = 'qgis_mapserver', ...programArgs] = options.command ?? [];
    const env = qgisServerEnvironment(options.env);
    // qgis_mapserver sets QGIS_SERVER_LOG_LEVEL from its -l option, 0 when not given.
    const logLevel = ['-l', env['QGIS_SERVER_LOG_LEVEL'] ?? DEFAULT_LOG_LEVEL];
    const child = spawn(program, [...programArgs, ...logLevel, `${host}:${port}`], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new QgisServerProcess(host, port, child, options.onLog);
    await server.waitUntilReady(options.readyWithinMs ?? READY_WITHIN_MS);
    return server;
  }

  /** What QGIS Server has logged recently (see ChildLog). */
  get log(): readonly string[] {
    return this.childLog.lines;
  }

  private async waitUntilReady(withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) {
        throw new Error(`qgis_mapserver exited with ${this.child.exitCode}: ${this.log.join('\n')}`);
      }
      // Its own word that it listens, since another process may hold the port it was given; then
      // a TCP connection, not an OWS request: a request without MAP makes QGIS Server log a
      // "Project file error" that tests reading its log would take for a broken project.
      if (this.log.some((line) => line.startsWith(LISTENING)) && (await accepts(this.host, this.port))) return;
      await sleep(100);
    }
    await this.stop();
    throw new Error(`qgis_mapserver did not answer within ${withinMs / 1000} seconds`);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}
