/**
 * The child process of `gdal-child.ts`: takes one task over IPC, runs it with GDAL, reports its
 * progress and its result, and exits. It exits as well when its parent is gone. It runs at a
 * lower priority than the API, so that the API's answers come first when the cores are busy.
 */
import { setPriority } from 'node:os';

import { StewardError } from '../errors.js';
import { computeRaster } from './calculator/calculate.js';
import { BACKGROUND_NICENESS, type ChildMessage, type GdalTask } from './gdal-child.js';
import { CALCULATOR_CACHE_MB, configureGdalMemory } from './gdal-memory.js';
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
  }
}

async function answer(task: GdalTask): Promise<void> {
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

// Threads inherit the niceness of the thread that starts them: set it before GDAL starts any.
try {
  setPriority(BACKGROUND_NICENESS);
} catch {
  // Not allowed here: the work runs at the API's priority.
}
process.on('disconnect', () => process.exit(1));
process.once('message', (task: GdalTask) => void answer(task));
void send({ type: 'ready' });
