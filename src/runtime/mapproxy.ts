import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

import { childEnvironment } from '../config.js';
import { ChildLog } from './child-log.js';
import { freePort } from './ports.js';
import { type QgisServerOptions } from './qgis-server.js';

const START_TIMEOUT_MS = 30_000;

/**
 * Where to listen, extra environment (the AWS variables its S3 caches need), a log listener, and
 * (`command`) the program with its first arguments when not `mapproxy-util` on the PATH.
 */
export interface MapProxyOptions extends QgisServerOptions {
  /** deploy/gunicorn.conf.py: serve with gunicorn, the production way, rather than the development server. */
  gunicornConfig?: string;
}

/** The command serving `configDir` on host:port, and its environment (deploy/systemd/steward-mapproxy.service runs it too). */
export function serverCommand(
  configDir: string,
  listen: string,
  options: MapProxyOptions,
): [string, string[], NodeJS.ProcessEnv] {
  const env = childEnvironment(options.env);
  if (options.gunicornConfig === undefined) {
    const [program = 'mapproxy-util', ...programArgs] = options.command ?? [];
    return [program, [...programArgs, 'serve-multiapp-develop', '--bind', listen, configDir], env];
  }
  return [
    'gunicorn',
    ['-c', options.gunicornConfig],
    { ...env, MAPPROXY_PROJECTS_DIR: configDir, MAPPROXY_LISTEN: listen },
  ];
}

/**
 * MapProxy serving every `<dir>/<app>.yaml` at `/<app>/`, reloading a configuration when its file
 * changes: under gunicorn (deploy/gunicorn.conf.py) or `mapproxy-util serve-multiapp-develop`. Both
 * run the server in child processes (workers, or the reloader's child), so it is started as its
 * own process group and stopped as one.
 */
export class MapProxyProcess {
  private readonly childLog: ChildLog;
  // Its own process group does not die with this process: take it down on exit, however we exit.
  private readonly stopOnExit = (): void => this.signal('SIGKILL');

  private constructor(
    readonly url: string,
    readonly child: ChildProcess,
    onLog?: (line: string) => void,
  ) {
    this.childLog = new ChildLog(child, onLog);
  }

  static async start(configDir: string, options: MapProxyOptions = {}): Promise<MapProxyProcess> {
    const host = options.host ?? '127.0.0.1';
    const port = options.port ?? (await freePort(host));
    const [program, args, env] = serverCommand(configDir, `${host}:${port}`, options);
    const child = spawn(program, args, {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const server = new MapProxyProcess(`http://${host}:${port}`, child, options.onLog);
    process.once('exit', server.stopOnExit);
    child.once('exit', () => process.off('exit', server.stopOnExit));
    await server.waitUntilReady();
    return server;
  }

  /** What MapProxy has logged recently (see ChildLog). */
  get log(): readonly string[] {
    return this.childLog.lines;
  }

  private get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private async waitUntilReady(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`MapProxy exited with ${this.child.exitCode}: ${this.log.join('\n')}`);
      try {
        if ((await fetch(`${this.url}/`)).ok) return;
      } catch {
        // Not listening yet.
      }
      await sleep(100);
    }
    await this.stop();
    throw new Error(`MapProxy did not answer within ${START_TIMEOUT_MS / 1000} seconds`);
  }

  private signal(name: NodeJS.Signals): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, name);
    } catch {
      // The group is already gone.
    }
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  }
}
