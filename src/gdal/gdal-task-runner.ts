/**
 * A GDAL worker process's work, run by its entry point `gdal-child-main.ts`: takes one task over
 * IPC, runs it with GDAL, reports its progress and its result, and exits. It exits as well when its
 * parent is gone. It keeps the background priority it started with for background work; work a
 * client waits for runs at the API's priority where the system allows it.
 */
import { StewardError } from '../errors.js';
import { BACKGROUND_NICENESS, setNiceness, STARTING_NICENESS } from '../runtime/niceness.js';
import { computeRaster } from './calculator/calculate.js';
import { readFieldValues } from './field-values.js';
import { type ChildMessage, type GdalTask, type TaskMessage } from './gdal-child.js';
import { CALCULATOR_CACHE_MB, configureGdalMemory } from './gdal-memory.js';
import { computeHistogram } from './histogram.js';
import { copyToObjectStorage } from './object-storage.js';
import { buildExternalOverviews } from './overviews.js';
import { importVector } from './vector-import.js';

function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) resolve();
    else process.send(message, undefined, {}, () => resolve());
  });
}

function progress(done: number, total: number): void {
  void send({ type: 'progress', done, total });
}

let lastPercent = -1;

/**
 * Progress as whole percent points, from GDAL's fraction done, sent when it changes: GDAL may call
 * back for every feature it copies.
 */
function percent(fraction: number): void {
  const points = Math.round(fraction * 100);
  if (points === lastPercent) return;
  lastPercent = points;
  progress(points, 100);
}

async function runTask(task: GdalTask): Promise<unknown> {
  switch (task.kind) {
    case 'calculate':
      await computeRaster(task.tree, new Map(Object.entries(task.sources)), task.workPath, task.format, progress);
      return undefined;
    case 'overviews':
      await buildExternalOverviews(task.path, task.factors, task.resampling, percent);
      return undefined;
    case 'upload':
      copyToObjectStorage(task.localPath, task.target);
      return undefined;
    case 'histogram':
      return computeHistogram(task.path, task.options);
    case 'field-values':
      return readFieldValues(task.source, task.field, task.limit);
    case 'import':
      await importVector(task.options, percent);
      return undefined;
  }
}

async function answer({ task, priority }: TaskMessage): Promise<void> {
  setNiceness(priority === 'background' ? BACKGROUND_NICENESS : STARTING_NICENESS);
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
      code: known ? error.code : null,
    });
  }
  process.exit(0);
}

process.on('disconnect', () => process.exit(1));
process.once('message', (message: TaskMessage) => void answer(message));
void send({ type: 'ready' });
