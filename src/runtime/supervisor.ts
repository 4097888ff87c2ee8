/**
 * The processes `npm start` runs (each qgis_mapserv.fcgi of the pool, nginx, MapProxy under
 * gunicorn), kept running. Each child starts in a process group of its own, so that its workers
 * (nginx's, gunicorn's) go with it: when the child exits, what is left of its group is killed
 * (workers holding its port would keep the next start from listening), and the child is started
 * again after a delay that doubles from 250 ms up to 30 s, back to 250 ms once a start has run
 * for 5 s: a child that fails as it starts backs off, one killed while it serves comes back at
 * once. Each restart is counted (`onRestart`, /metrics' steward_child_restarts_total) and said
 * in the log; every line a child writes goes to the log as a structured line naming the child.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

import { ChildLog } from './child-log.js';

export const FIRST_RESTART_DELAY_MS = 250;
export const LONGEST_RESTART_DELAY_MS = 30_000;
/** A start that ran this long was no failure to start: the next delay is the first again. */
export const STABLE_RUN_MS = 5_000;
/** How long SIGTERM may take before the group is killed. */
const STOP_TIMEOUT_MS = 3000;

/** Where the children's lines and restarts are said: Steward's pino logger, or the like. */
export interface SupervisorLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface SupervisorOptions {
  log?: SupervisorLog;
  /** Hears each restart, with the child's name. */
  onRestart?: (child: string) => void;
}

export interface ChildSpec {
  /** The name in the log and the metrics: `nginx`, `mapproxy`, `qgis-fcgi:9001`. */
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  /** Hears each line the child writes, besides the log. */
  onLine?: (line: string) => void;
}

/** One child, started again whenever it exits until it is stopped. */
export class SupervisedChild {
  private current: ChildProcess | undefined;
  private readonly childLog: ChildLog;
  private stopping = false;
  private delayMs = FIRST_RESTART_DELAY_MS;
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  /** Times the child was started again. */
  restarts = 0;

  constructor(
    readonly spec: ChildSpec,
    private readonly options: SupervisorOptions,
  ) {
    this.childLog = new ChildLog(undefined, (line, stream) => {
      options.log?.info({ child: spec.name, stream }, line);
      spec.onLine?.(line);
    });
    this.start();
  }

  /** The running process's id; undefined between an exit and the next start. */
  get pid(): number | undefined {
    return this.running ? this.current?.pid : undefined;
  }

  get running(): boolean {
    return this.current !== undefined && this.current.exitCode === null && this.current.signalCode === null;
  }

  /** Its exit code while it is not running (a start that failed at once), else undefined. */
  get exitCode(): number | null | undefined {
    return this.running ? undefined : this.current?.exitCode;
  }

  /** What the child has written recently, over its starts (see ChildLog). */
  get log(): readonly string[] {
    return this.childLog.lines;
  }

  private start(): void {
    this.startedAt = Date.now();
    const child = spawn(this.spec.command, [...this.spec.args], {
      env: this.spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.once('error', () => undefined); // A program that cannot start also exits, which is heard below.
    this.childLog.follow(child);
    child.once('exit', (code, signal) => this.exited(child, code, signal));
    this.current = child;
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    killGroup(child, 'SIGKILL');
    if (this.stopping) return;
    if (Date.now() - this.startedAt >= STABLE_RUN_MS) this.delayMs = FIRST_RESTART_DELAY_MS;
    const delayMs = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, LONGEST_RESTART_DELAY_MS);
    this.options.log?.warn(
      { child: this.spec.name, pid: child.pid, code, signal, restartInMs: delayMs },
      `${this.spec.name} exited (${signal ?? `code ${code}`}); starting it again in ${delayMs} ms`,
    );
    this.timer = setTimeout(() => {
      if (this.stopping) return;
      this.restarts++;
      this.options.onRestart?.(this.spec.name);
      this.start();
    }, delayMs);
  }

  /** Stops the child and its group for good: SIGTERM, then SIGKILL after 3 s. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    const child = this.current;
    if (!child || !this.running) return;
    const exited = once(child, 'exit');
    killGroup(child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  /** Kills the group at once (the process is exiting and cannot wait). */
  kill(): void {
    this.stopping = true;
    clearTimeout(this.timer);
    if (this.current) killGroup(this.current, 'SIGKILL');
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** The children of one process: started, kept running, and stopped together. */
export class Supervisor {
  private readonly children: SupervisedChild[] = [];
  // Their groups do not die with this process: take them down on exit, however it exits.
  private readonly killOnExit = (): void => {
    for (const child of this.children) child.kill();
  };

  constructor(private readonly options: SupervisorOptions = {}) {
    process.once('exit', this.killOnExit);
  }

  start(spec: ChildSpec): SupervisedChild {
    const child = new SupervisedChild(spec, this.options);
    this.children.push(child);
    return child;
  }

  /** Stops every child, the last started first. */
  async stop(): Promise<void> {
    for (const child of [...this.children].reverse()) await child.stop();
    process.off('exit', this.killOnExit);
  }
}
