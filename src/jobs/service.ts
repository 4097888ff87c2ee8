import { Conflict, NotFound, StewardError } from '../errors.js';
import { KeyedMutex } from '../storage/lock.js';
import { projectKey, type ProjectRef } from '../storage/project-store.js';
import { isEnded, type JobFilter, type JobRecord, ownerGone, queuedJob, thisProcess } from './record.js';
import { type JobStore } from './store.js';

/** What running work is given: a signal that fires on cancel, and a way to report progress. */
export interface JobContext {
  signal: AbortSignal;
  /** `done` of `total` units; `total` 0 when not known yet. */
  progress: (done: number, total: number) => void;
}

/** The work of a job; what it returns becomes the job's `result`. */
export type JobWork = (context: JobContext) => Promise<Record<string, unknown> | undefined>;

export interface JobRequest {
  kind: string;
  project: ProjectRef;
  params: Record<string, unknown>;
}

export interface JobServiceOptions {
  /** How many jobs run at once in this process. */
  concurrency: number;
  /** Whether job records name the project's schema (projects in PostgreSQL). */
  withSchema: boolean;
  heartbeatMs?: number;
  /** A job whose owner has not renewed its heartbeat for this long is taken as dead. */
  leaseMs?: number;
  /** Least time between two progress writes of a job. */
  progressWriteMs?: number;
  log?: { info(message: string): void; warn(message: string): void };
}

interface Queued {
  id: string;
  /** The project the job is of, as schema and name. */
  key: string;
  work: JobWork;
}

interface Running {
  key: string;
  controller: AbortController;
  settled: Promise<void>;
}

const DEFAULT_HEARTBEAT_MS = 5_000;
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_PROGRESS_WRITE_MS = 500;
/** How long a cancel waits for the work to stop before it answers. */
const CANCEL_WAIT_MS = 5_000;

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What a failed job's record tells clients: an engine's own text stays in the log (docs/errors.md). */
function clientMessage(error: unknown): string {
  return error instanceof StewardError ? error.clientMessage : errorMessage(error);
}

/**
 * Long work as jobs: each kept in the job store from the moment it is asked for, run by a queue of
 * at most `concurrency` jobs at once that takes projects in turn (round robin), so one project's
 * many jobs do not hold up another's. Jobs whose process died are failed by the next process to
 * look; a process renews the heartbeat of its own unfinished jobs while it lives.
 */
export class JobService {
  private readonly queues = new Map<string, Queued[]>();
  /** Projects with queued jobs, in the order they first queued one. */
  private readonly turn: string[] = [];
  /** When each project last had a job started, as a count of jobs started. */
  private readonly served = new Map<string, number>();
  private servings = 0;
  private readonly running = new Map<string, Running>();
  private readonly writes = new KeyedMutex();
  private readonly owner = thisProcess();
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly heartbeatMs: number;
  private readonly leaseMs: number;
  private readonly progressWriteMs: number;

  constructor(
    private readonly store: JobStore,
    private readonly options: JobServiceOptions,
  ) {
    this.heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.progressWriteMs = options.progressWriteMs ?? DEFAULT_PROGRESS_WRITE_MS;
  }

  get concurrency(): number {
    return this.options.concurrency;
  }

  /** Fails the jobs of dead processes, then renews this process's jobs and looks again, periodically. */
  async start(): Promise<void> {
    const failed = await this.failAbandoned();
    if (failed > 0) this.options.log?.info(`marked ${failed} jobs of stopped processes as failed`);
    this.heartbeat = setInterval(() => {
      this.beat().catch((error: unknown) => this.options.log?.warn(`job heartbeat failed: ${errorMessage(error)}`));
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Stops the queue; jobs still queued or running here are failed, since no process will finish them. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeat);
    const queued = [...this.queues.values()].flat();
    this.queues.clear();
    this.turn.length = 0;
    for (const { id } of queued) await this.finish(id, 'failed', 'Steward stopped before the job started');
    for (const running of this.running.values()) running.controller.abort(new Error('Steward stopped'));
    await Promise.all([...this.running.values()].map((running) => running.settled));
  }

  async submit(request: JobRequest, work: JobWork): Promise<JobRecord> {
    if (this.closed) throw new Conflict('Steward is stopping: no new jobs are taken');
    const job = queuedJob(request.kind, request.project, request.params, this.owner, this.options.withSchema);
    await this.store.insert(job);
    const key = projectKey(request.project);
    const queue = this.queues.get(key);
    if (queue) queue.push({ id: job.id, key, work });
    else {
      this.queues.set(key, [{ id: job.id, key, work }]);
      this.turn.push(key);
    }
    this.pump();
    return job;
  }

  async get(id: string): Promise<JobRecord> {
    const job = await this.store.get(id);
    if (job === undefined) throw new NotFound(`job "${id}" not found`, { code: 'job_not_found' });
    return job;
  }

  list(filter: JobFilter): Promise<JobRecord[]> {
    return this.store.list(filter);
  }

  /**
   * Cancels a queued or running job. Work running here is stopped and waited for (a little); a job
   * of another process is marked cancelled, which its process sees at its next heartbeat.
   */
  async cancel(id: string): Promise<JobRecord> {
    const job = await this.get(id);
    if (isEnded(job.state)) throw new Conflict(`job "${id}" has already ended (${job.state})`, { code: 'job_ended' });
    if (this.dequeue(id)) return this.required(await this.finish(id, 'cancelled', null));
    const running = this.running.get(id);
    if (running) {
      running.controller.abort(new Error('cancelled'));
      await Promise.race([running.settled, new Promise((resolve) => setTimeout(resolve, CANCEL_WAIT_MS).unref())]);
      return this.get(id);
    }
    const cancelled = await this.finish(id, 'cancelled', null);
    if (cancelled?.state !== 'cancelled')
      throw new Conflict(`job "${id}" has already ended (${cancelled?.state})`, { code: 'job_ended' });
    return cancelled;
  }

  private required(job: JobRecord | undefined): JobRecord {
    if (job === undefined) throw new NotFound('job not found', { code: 'job_not_found' });
    return job;
  }

  private dequeue(id: string): boolean {
    for (const [key, queue] of this.queues) {
      const index = queue.findIndex((entry) => entry.id === id);
      if (index < 0) continue;
      queue.splice(index, 1);
      if (queue.length === 0) this.dropProject(key);
      return true;
    }
    return false;
  }

  private dropProject(key: string): void {
    this.queues.delete(key);
    const index = this.turn.indexOf(key);
    if (index >= 0) this.turn.splice(index, 1);
  }

  /**
   * The next job: the oldest of the project with the fewest jobs running, and of those projects
   * the one served longest ago, so that each project gets its turn.
   */
  private next(): Queued | undefined {
    const runningOf = new Map<string, number>();
    for (const { key } of this.running.values()) runningOf.set(key, (runningOf.get(key) ?? 0) + 1);
    const rank = (key: string): [number, number] => [runningOf.get(key) ?? 0, this.served.get(key) ?? -1];
    let chosen: string | undefined;
    for (const key of this.turn) {
      if (chosen === undefined) chosen = key;
      else {
        const [running, served] = rank(key);
        const [bestRunning, bestServed] = rank(chosen);
        if (running < bestRunning || (running === bestRunning && served < bestServed)) chosen = key;
      }
    }
    if (chosen === undefined) return undefined;
    this.served.set(chosen, (this.servings += 1));
    const queue = this.queues.get(chosen) ?? [];
    const entry = queue.shift();
    if (queue.length === 0) this.dropProject(chosen);
    return entry;
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.options.concurrency) {
      const entry = this.next();
      if (entry === undefined) return;
      this.run(entry);
    }
  }

  private run({ id, key, work }: Queued): void {
    const controller = new AbortController();
    const settled = this.execute(id, work, controller).finally(() => {
      this.running.delete(id);
      this.pump();
    });
    this.running.set(id, { key, controller, settled });
  }

  private async execute(id: string, work: JobWork, controller: AbortController): Promise<void> {
    const started = await this.write(id, (job) =>
      job.state === 'queued' ? { ...job, state: 'running', started: new Date().toISOString() } : undefined,
    );
    if (started?.state !== 'running') return;
    const progress = this.progressWriter(id);
    try {
      const result = await work({ signal: controller.signal, progress: progress.report });
      await progress.flush();
      if (controller.signal.aborted) throw controller.signal.reason;
      await this.write(id, (job) =>
        job.state === 'running'
          ? {
              ...job,
              state: 'succeeded',
              progress: 1,
              ...(job.total > 0 && { done: job.total }),
              finished: new Date().toISOString(),
              ...(result && { result }),
            }
          : undefined,
      );
    } catch (error) {
      await progress.flush();
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
      const cancelled = errorMessage(reason) === 'cancelled';
      if (!cancelled) this.options.log?.warn(`job ${id} failed: ${errorMessage(reason)}`);
      await this.finish(id, cancelled ? 'cancelled' : 'failed', cancelled ? null : clientMessage(reason));
    }
  }

  /**
   * Progress kept in memory and written at most every `progressWriteMs`: the first report at once
   * (a job shows it has started without waiting a period), the latest of each period at its end.
   */
  private progressWriter(id: string): { report: (done: number, total: number) => void; flush: () => Promise<void> } {
    let latest: { done: number; total: number } | undefined;
    let timer: NodeJS.Timeout | undefined;
    let pending: Promise<unknown> = Promise.resolve();
    const write = (): Promise<unknown> => {
      const value = latest;
      latest = undefined;
      if (value === undefined) return pending;
      const { done, total } = value;
      const fraction = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
      pending = this.write(id, (job) =>
        job.state === 'running' ? { ...job, done, total, progress: fraction } : undefined,
      ).catch((error: unknown) => this.options.log?.warn(`progress of job ${id} not saved: ${errorMessage(error)}`));
      return pending;
    };
    // A period starts with a write; one that ends with a report unwritten starts the next.
    const startPeriod = (): void => {
      void write();
      timer = setTimeout(() => {
        timer = undefined;
        if (latest !== undefined) startPeriod();
      }, this.progressWriteMs);
    };
    return {
      report: (done, total) => {
        latest = { done, total };
        if (timer === undefined) startPeriod();
      },
      flush: async () => {
        clearTimeout(timer);
        timer = undefined;
        await write();
      },
    };
  }

  private finish(id: string, state: 'failed' | 'cancelled', error: string | null): Promise<JobRecord | undefined> {
    return this.write(id, (job) =>
      isEnded(job.state) ? undefined : { ...job, state, error, finished: new Date().toISOString() },
    );
  }

  /** Store updates of one job go one after the other, in the order they were asked for. */
  private write(id: string, change: (job: JobRecord) => JobRecord | undefined): Promise<JobRecord | undefined> {
    return this.writes.run(id, () => this.store.update(id, change));
  }

  /** Renews this process's unfinished jobs, stops those cancelled by another process, fails abandoned ones. */
  private async beat(): Promise<void> {
    const now = new Date().toISOString();
    const mine = [...this.running.keys(), ...[...this.queues.values()].flat().map((entry) => entry.id)];
    for (const id of mine) {
      const job = await this.write(id, (current) =>
        isEnded(current.state) ? undefined : { ...current, heartbeat: now },
      );
      if (job?.state === 'cancelled') {
        this.running.get(id)?.controller.abort(new Error('cancelled'));
        this.dequeue(id);
      }
    }
    await this.failAbandoned();
  }

  private async failAbandoned(): Promise<number> {
    let failed = 0;
    const now = Date.now();
    for (const state of ['queued', 'running'] as const) {
      for (const job of await this.store.list({ state })) {
        if (!ownerGone(job, now, this.leaseMs)) continue;
        const reason = `the Steward process that ran it (pid ${job.owner.pid} on ${job.owner.host}) stopped before the job ended`;
        const updated = await this.write(job.id, (current) =>
          isEnded(current.state) || !ownerGone(current, now, this.leaseMs)
            ? undefined
            : { ...current, state: 'failed', error: reason, finished: new Date().toISOString() },
        );
        if (updated?.state === 'failed') failed += 1;
      }
    }
    return failed;
  }
}
