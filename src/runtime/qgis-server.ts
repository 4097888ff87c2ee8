import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

import { childEnvironment, QGIS_REQUEST_DEFAULTS } from '../config.js';
import { ChildLog } from './child-log.js';
import { accepts, freePort } from './ports.js';
import { type Supervisor } from './supervisor.js';

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

/** The command of qgis_mapserver listening on host:port, and its environment. */
function mapserverCommand(
  host: string,
  port: number,
  options: QgisServerOptions,
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const [program = 'qgis_mapserver', ...programArgs] = options.command ?? [];
  const env = qgisServerEnvironment(options.env);
  // qgis_mapserver sets QGIS_SERVER_LOG_LEVEL from its -l option, 0 when not given.
  const logLevel = ['-l', env['QGIS_SERVER_LOG_LEVEL'] ?? DEFAULT_LOG_LEVEL];
  return { command: program, args: [...programArgs, ...logLevel, `${host}:${port}`], env };
}

/**
 * Waits until qgis_mapserver on host:port listens; throws once `exited` says how it exited, or
 * `withinMs` passed.
 */
async function untilListening(
  host: string,
  port: number,
  withinMs = READY_WITHIN_MS,
  log: () => readonly string[],
  exited: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const how = exited();
    if (how !== undefined) throw new Error(`qgis_mapserver exited with ${how}: ${log().join('\n')}`);
    // Its own word that it listens, since another process may hold the port it was given; then
    // a TCP connection, not an OWS request: a request without MAP makes QGIS Server log a
    // "Project file error" that tests reading its log would take for a broken project.
    if (log().some((line) => line.startsWith(LISTENING)) && (await accepts(host, port))) return;
    await sleep(100);
  }
  throw new Error(`qgis_mapserver did not answer within ${withinMs / 1000} seconds`);
}

/**
 * qgis_mapserver on `options.port` under `supervisor`, started again whenever it exits, as every
 * process of the production stack is (`npm start` with STEWARD_DEV_SERVERS=1).
 */
export async function startSupervisedMapserver(
  supervisor: Supervisor,
  options: QgisServerOptions & { port: number },
): Promise<{ url: string; stop(): Promise<void> }> {
  const host = options.host ?? '127.0.0.1';
  const onLine = options.onLog && { onLine: options.onLog };
  const child = supervisor.start({
    name: 'qgis-mapserver',
    ...mapserverCommand(host, options.port, options),
    ...onLine,
  });
  try {
    // A start that failed is started again: its first exit is the answer.
    const exited = (): string | undefined =>
      child.restarts > 0 || !child.running ? String(child.exitCode ?? 'a signal') : undefined;
    await untilListening(host, options.port, options.readyWithinMs, () => child.log, exited);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { url: `http://${host}:${options.port}/ows/`, stop: () => child.stop() };
}

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
    const { command, args, env } = mapserverCommand(host, port, options);
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const server = new QgisServerProcess(host, port, child, options.onLog);
    try {
      const exited = (): string | undefined => (child.exitCode === null ? undefined : String(child.exitCode));
      await untilListening(host, port, options.readyWithinMs, () => server.log, exited);
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  /** What QGIS Server has logged recently (see ChildLog). */
  get log(): readonly string[] {
    return this.childLog.lines;
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
