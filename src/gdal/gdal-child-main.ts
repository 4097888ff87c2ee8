/**
 * The child process of `gdal-child.ts`: takes one task over IPC, runs it with GDAL, reports its
 * progress and its result, and exits. It exits as well when its parent is gone. It starts at a
 * lower priority than the API, so that the API's answers come first when the cores are busy, and
 * keeps it for background work; work a client waits for runs at the API's priority where the
 * system allows it.
 */
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

import { StewardError } from '../errors.js';
import { computeRaster } from './calculator/calculate.js';
import { BACKGROUND_NICENESS, type ChildMessage, type GdalTask, type TaskMessage } from './gdal-child.js';
import { CALCULATOR_CACHE_MB, configureGdalMemory } from './gdal-memory.js';
import { computeHistogram } from './histogram.js';
import { copyToObjectStorage } from './object-storage.js';
import { buildExternalOverviews } from './overviews.js';

function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) resolve();
    else process.send(message, undefined, {}, () => resolve());
  });
}

function progress(done: number, total: number): void {
  void send({ type: 'progress', done, total });
}

async function runTask(task: GdalTask): Promise<unknown> {
  switch (task.kind) {
    case 'calculate':
      await computeRaster(task.tree, new Map(Object.entries(task.sources)), task.workPath, task.format, progress);
      return undefined;
    case 'overviews':
      await buildExternalOverviews(task.path, task.factors, task.resampling, (fraction) =>
        progress(Math.round(fraction * 100), 100),
      );
      return undefined;
    case 'upload':
      copyToObjectStorage(task.localPath, task.target);
      return undefined;
    case 'histogram':
      return computeHistogram(task.path, task.options);
  }
}

/** The API's niceness, which this process started with. */
const API_NICENESS = getPriority();

/**
 * Sets the niceness of every thread of this process (Linux's niceness is a thread's): Node's and
 * libuv's, which GDAL's reads and writes run on. The threads started later inherit it from these.
 */
function setNiceness(niceness: number): void {
  for (const thread of readdirSync('/proc/self/task')) {
    try {
      setPriority(Number(thread), niceness);
    } catch {
      // Ended meanwhile, or not allowed (lowering a niceness needs CAP_SYS_NICE or RLIMIT_NICE).
    }
  }
}

async function answer({ task, priority }: TaskMessage): Promise<void> {
  setNiceness(priority === 'background' ? BACKGROUND_NICENESS : API_NICENESS);
  configureGdalMemory(task.kind === 'calculate' ? CALCULATOR_CACHE_MB : undefined);
  try {
    await send({ type: 'done', result: await runTask(task) });
  } catch (error) {
    const known = error instanceof StewardError;
    const message = error instanceof Error ? error.message : String(error);
    await send({
      type: 'error',
      status: known ? error.status : null,
      message,
      clientMessage: known ? error.clientMessage : message,
    });
  }
  process.exit(0);
}

// Starting up and waiting are background work: nobody waits for a spare.
setNiceness(BACKGROUND_NICENESS);
process.on('disconnect', () => process.exit(1));
process.once('message', (message: TaskMessage) => void answer(message));
void send({ type: 'ready' });
