import { setTimeout as sleep } from 'node:timers/promises';

import { childEnvironment } from '../config.js';
import { freePort } from './ports.js';
import { type QgisServerOptions } from './qgis-server.js';
import { type SupervisedChild, Supervisor } from './supervisor.js';

const START_TIMEOUT_MS = 30_000;

/**
 * Where to listen, extra environment (the AWS variables its S3 caches need), a log listener, and
 * (`command`) the program with its first arguments when not `mapproxy-util` on the PATH.
 */
export interface MapProxyOptions extends QgisServerOptions {
  /** deploy/gunicorn.conf.py: serve with gunicorn, the production way, rather than the development server. */
  gunicornConfig?: string;
  /** Supervises it (the launcher's, which logs and counts restarts); one of its own if not given. */
  supervisor?: Supervisor;
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
 * run the server in child processes (workers, or the reloader's child): it is supervised (started
 * again when it exits) as a process group, and stopped as one.
 */
export class MapProxyProcess {
  private constructor(
    readonly url: string,
    private readonly child: SupervisedChild,
    private readonly ownSupervisor: Supervisor | undefined,
  ) {}

  static async start(configDir: string, options: MapProxyOptions = {}): Promise<MapProxyProcess> {
    const host = options.host ?? '127.0.0.1';
    const port = options.port ?? (await freePort(host));
    const [command, args, env] = serverCommand(configDir, `${host}:${port}`, options);
    const supervisor = options.supervisor ?? new Supervisor();
    const ownSupervisor = supervisor === options.supervisor ? undefined : supervisor;
    const child = supervisor.start({
      name: 'mapproxy',
      command,
      args,
      env,
      ...(options.onLog && { onLine: options.onLog }),
    });
    const server = new MapProxyProcess(`http://${host}:${port}`, child, ownSupervisor);
    await server.waitUntilReady();
    return server;
  }

  /** What MapProxy has logged recently (see ChildLog). */
  get log(): readonly string[] {
    return this.child.log;
  }

  /** The process id of gunicorn's master (or of the development server), while it runs. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  private async waitUntilReady(): Promise<void> {
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (this.child.restarts > 0 || !this.child.running) {
        await this.stop();
        throw new Error(`MapProxy exited with ${this.child.exitCode}: ${this.log.join('\n')}`);
      }
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

  async stop(): Promise<void> {
    await this.child.stop();
    await this.ownSupervisor?.stop();
  }
}
