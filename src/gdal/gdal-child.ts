/**
 * Heavy GDAL work off the event loop: each task runs in a Node child process of its own
 * (`gdal-child-main.ts`), which reports progress and its result over IPC. A task is stopped at
 * once by killing its process, whatever GDAL call it is in (GDAL's own calls cannot be cancelled
 * from JavaScript); the caller then removes what the task had written, which it always knows,
 * since it chooses the paths. The child ends with this process (it exits when the IPC channel
 * closes). This is the only module that starts or talks to these processes.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

import gdal from 'gdal-async';

import { childEnvironment } from '../config.js';
import {
  BadGateway,
  BadRequest,
  Conflict,
  type ErrorCode,
  NotFound,
  StewardError,
  type StewardErrorOptions,
  Unprocessable,
} from '../errors.js';
import { type ExpressionNode } from './calculator/ast.js';
import { type OutputFormat } from './calculator/format.js';
import { type GdalSource } from './datasource.js';
import { type HistogramOptions } from './histogram-bins.js';
import { type VectorImport } from './vector-import.js';

/** What a child process can be asked to do. */
export type GdalTask =
  /** Computes `tree` over `sources` (layer name to datasource) into the local GeoTIFF `workPath`. */
  | {
      kind: 'calculate';
      tree: ExpressionNode;
      sources: Record<string, string>;
      workPath: string;
      format: OutputFormat;
    }
  /** Builds the external overviews (`<path>.ovr`) of the raster at `path`. */
  | { kind: 'overviews'; path: string; factors: number[]; resampling: string }
  /** Copies the local file `localPath` to the `/vsis3/` path `target`. */
  | { kind: 'upload'; localPath: string; target: string }
  /** The histogram of every band of the raster at `path` (histogram.ts). */
  | { kind: 'histogram'; path: string; options: HistogramOptions }
  /** The distinct values, minimum and maximum of a vector layer's field (field-values.ts). */
  | { kind: 'field-values'; source: GdalSource; field: string; limit: number }
  /** Copies a vector layer into a PostgreSQL table (vector-import.ts). */
  | { kind: 'import'; options: VectorImport };

/**
 * How a task's process shares the cores with the API: `background` work (the default) runs behind
 * the requests the API answers; `interactive` work, which a client waits for, beside them.
 */
export type TaskPriority = 'background' | 'interactive';

/** What the child process is sent: its one task. */
export interface TaskMessage {
  task: GdalTask;
  priority: TaskPriority;
}

export interface TaskRun {
  /** Kills the task's process. */
  signal?: AbortSignal;
  /** `done` of `total` units of the task. */
  progress?: (done: number, total: number) => void;
  /** `background` unless told. */
  priority?: TaskPriority;
}

/** Messages from the child to this process. */
export type ChildMessage =
  /** Node and GDAL are loaded: the process waits for its task. */
  | { type: 'ready' }
  | { type: 'progress'; done: number; total: number }
  | { type: 'done'; result: unknown }
  | { type: 'error'; status: number | null; message: string; clientMessage: string; code: ErrorCode | null };

/** GDAL configuration options set in this process that children must have too (object storage). */
const shared: Record<string, string> = {};

/** Options set in this process with gdal.config that every child process gets as well. */
export function shareWithChildren(options: Record<string, string>): void {
  Object.assign(shared, options);
  // A spare started before has its environment without them.
  stopSpare();
  startSpare();
}

const here = fileURLToPath(import.meta.url);
/** The child's module, compiled (.js) or run through tsx (.ts) like this one. */
const CHILD_MAIN = here.replace(/gdal-child\.[cm]?[jt]s$/, `gdal-child-main${extname(here)}`);

const ERRORS: Record<number, new (message: string, options?: StewardErrorOptions) => StewardError> = {
  400: BadRequest,
  404: NotFound,
  409: Conflict,
  422: Unprocessable,
  502: BadGateway,
};

/** The child's failure as the error class it was thrown as, or a plain Error for an engine's own. */
function childError(message: Extract<ChildMessage, { type: 'error' }>): Error {
  if (message.status === null) return new Error(message.message);
  const options = { clientMessage: message.clientMessage, code: message.code ?? undefined };
  const Known = ERRORS[message.status];
  if (Known) return new Known(message.message, options);
  return new StewardError(message.status, message.message, options);
}

let uploads = 0;

/**
 * After another process wrote to object storage, GDAL here must forget what it listed or learnt
 * of the bucket, or the new object stays invisible to it. Setting any `AWS_` option makes GDAL
 * drop its cached listings and file properties (it takes them as made with other credentials).
 */
export function forgetObjectStorageListings(): void {
  uploads += 1;
  gdal.config.set('AWS_STEWARD_UPLOADS', String(uploads));
}

/**
 * The task's result once the child reports it, its failure once the child has ended. A task has
 * closed its files when it reports; the child's exit after (its threads, its heap) can take far
 * longer than the task's last step on a busy machine (docs/jobs.md), and the result need not wait.
 */
function settle(child: ChildProcess, run: TaskRun): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let outcome: { ok: true; value: unknown } | { ok: false; error: Error } | undefined;
    const abort = (): void => {
      const reason: unknown = run.signal?.reason;
      outcome ??= { ok: false, error: reason instanceof Error ? reason : new Error(String(reason)) };
      child.kill('SIGKILL');
    };
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'progress') run.progress?.(message.done, message.total);
      else if (message.type === 'done') {
        outcome ??= { ok: true, value: message.result };
        if (outcome.ok) resolve(outcome.value);
      } else if (message.type === 'error') outcome ??= { ok: false, error: childError(message) };
    });
    child.once('error', (error) => {
      outcome ??= { ok: false, error };
    });
    child.once('exit', (code, signal) => {
      run.signal?.removeEventListener('abort', abort);
      if (outcome?.ok) resolve(outcome.value);
      else reject(outcome?.error ?? new Error(`the GDAL worker process ended (${signal ?? code}) without a result`));
    });
    if (run.signal?.aborted) abort();
    else run.signal?.addEventListener('abort', abort, { once: true });
  });
}

/** A module specifier Node resolves from the working folder: a package name, not a path or URL. */
function isBareSpecifier(specifier: string): boolean {
  return !/^(\.{0,2}\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);
}

/**
 * This process's Node flags for the child. A module preloaded by package name (`--import tsx`
 * when run from the sources) is resolved from here, since Node would look for it from the
 * working folder, which need not be the checkout.
 */
function childExecArgv(): string[] {
  const flags = process.execArgv;
  return flags.map((flag, index) => {
    if (flags[index - 1] === '--import' && isBareSpecifier(flag)) return import.meta.resolve(flag);
    const inline = /^--import=(.+)$/.exec(flag)?.[1];
    if (inline !== undefined && isBareSpecifier(inline)) return `--import=${import.meta.resolve(inline)}`;
    return flag;
  });
}

/**
 * A worker process's memory: GDAL's I/O threads, which allocate little, share one malloc arena
 * instead of one each, and V8's young generation stays at 1 MiB per thread instead of growing
 * to 16 MiB, since a task allocates little in JavaScript beyond its buffers. OpenBLAS, which
 * GDAL's library loads and no task uses, starts no threads of its own: one per core spun after the
 * process started, into the start of its task (figures: docs/jobs.md).
 */
const CHILD_MEMORY_ENV = { MALLOC_ARENA_MAX: '1', OPENBLAS_NUM_THREADS: '1' };
const CHILD_MEMORY_FLAGS = ['--max-semi-space-size=1'];
/**
 * One libuv thread, whatever the environment says: a task's asynchronous GDAL calls then run one at
 * a time in the order asked, which the calculator's runner relies on (calculator/runner.ts).
 */
const CHILD_SERIAL_IO_ENV = { UV_THREADPOOL_SIZE: '1' };

/** A worker process's environment: this process's, with the settings above. */
export function workerEnvironment(): NodeJS.ProcessEnv {
  return childEnvironment({ ...shared, ...CHILD_SERIAL_IO_ENV }, CHILD_MEMORY_ENV);
}

function forkChild(): ChildProcess {
  return fork(CHILD_MAIN, [], {
    env: workerEnvironment(),
    execArgv: [...childExecArgv(), ...CHILD_MEMORY_FLAGS],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
}

/**
 * A worker process started ahead of its task, so that the task does not wait the 0.2 to 0.3 s in
 * which Node starts and loads GDAL. Once ready it no longer keeps this process from exiting (it is
 * unreferenced), and it exits with it.
 */
let spare: { child: ChildProcess; ready: Promise<void> } | undefined;
let keepSpare = false;

function startSpare(): void {
  if (!keepSpare || spare) return;
  const child = forkChild();
  const ready = new Promise<void>((resolve) => {
    child.on('message', (message: ChildMessage) => {
      if (message.type !== 'ready') return;
      // Referenced until ready, so that a process waiting for it does not exit meanwhile.
      if (spare?.child === child) {
        child.unref();
        child.channel?.unref();
      }
      resolve();
    });
    child.once('exit', () => {
      if (spare?.child === child) spare = undefined;
      resolve();
    });
  });
  spare = { child, ready };
}

function stopSpare(): void {
  spare?.child.kill('SIGKILL');
  spare = undefined;
}

/**
 * From now on, keeps one worker process started ahead of the next task (the API does from its
 * start). Resolves once that process is ready.
 */
export async function keepWorkerReady(): Promise<void> {
  keepSpare = true;
  startSpare();
  await spare?.ready;
}

/**
 * From the end of the first task on, keeps one worker process started ahead of the next one, so
 * an API that never computes does not hold an idle process (its size: docs/jobs.md).
 */
export function keepWorkerReadyAfterFirstTask(): void {
  keepSpare = true;
}

/** Stops the spare worker process and starts no other. */
export function stopWorkerReady(): void {
  keepSpare = false;
  stopSpare();
}

/** The spare, if it is still there, for this task, else a new process. */
function takeChild(): ChildProcess {
  const taken = spare?.child;
  spare = undefined;
  if (!taken?.connected) return forkChild();
  taken.ref();
  taken.channel?.ref();
  return taken;
}

/** Runs `task` in a child process of its own and returns its result. */
export async function runGdalTask(task: GdalTask, run: TaskRun = {}): Promise<unknown> {
  run.signal?.throwIfAborted();
  const child = takeChild();
  const result = settle(child, run);
  child.send({ task, priority: run.priority ?? 'background' } satisfies TaskMessage);
  try {
    return await result;
  } finally {
    if (task.kind === 'upload') forgetObjectStorageListings();
    // The next spare starts once this task is over, so that it does not take the task's cores.
    startSpare();
  }
}
