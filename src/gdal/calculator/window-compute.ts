/**
 * The computation of one window: the compiled expression, then its overview pixels. Windows are
 * independent (each maps onto whole overview pixels), so several are computed at once: one on the
 * worker process's main thread, the others on worker threads (`compute-thread.ts`), each with its
 * own kernel and pyramid, all on buffers shared with the main thread, so no pixel is copied
 * between threads.
 */
import { siblingModule, startThread } from '../../runtime/worker-thread.js';
import { type ExpressionNode } from './ast.js';
import { compileExpression, type Kernel, type KernelInput } from './compiler.js';
import { OverviewPyramid } from './pyramid.js';
import type { WindowSlot } from './slot-memory.js';

/**
 * What every computing thread is given once: the expression, its inputs, the output's no-data
 * value and the slots. (Threads import no GDAL: its binding loads once per process.)
 */
export interface ComputeSetup {
  tree: ExpressionNode;
  inputs: KernelInput[];
  noData: number;
  slots: WindowSlot[];
}

/** Computes windows into slots; `compute` resolves once the slot's output and overviews are filled. */
export interface WindowComputer {
  compute(slot: number, width: number, height: number): Promise<void>;
  close(): Promise<void>;
}

/** Computes a slot's window with this thread's kernel and pyramid. */
export type SlotComputation = (slot: number, width: number, height: number) => void;

export function slotComputation(setup: ComputeSetup): SlotComputation {
  const kernel: Kernel = compileExpression(setup.tree, setup.inputs, setup.noData);
  const pyramid = new OverviewPyramid(setup.noData);
  return (index, width, height) => {
    const slot = setup.slots[index] as WindowSlot;
    kernel(width * height, slot.output, slot.inputs);
    pyramid.reduce(slot.output, width, height, slot.levels, slot.overviews);
  };
}

/**
 * Computes on the calling thread, from the event loop's next turn: the reads and writes that were
 * waiting for this window's turn are handed to GDAL's threads first, instead of after the
 * computation, which had left the core of GDAL's I/O idle meanwhile (docs/jobs.md).
 */
export function inlineComputer(setup: ComputeSetup): WindowComputer {
  const compute = slotComputation(setup);
  return {
    compute: (slot, width, height) =>
      new Promise((resolve, reject) => {
        setImmediate(() => {
          try {
            resolve(compute(slot, width, height));
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
      }),
    close: () => Promise.resolve(),
  };
}

/** The thread's module, compiled (.js) or run through tsx (.ts) like this one. */
const THREAD_MAIN = siblingModule(import.meta.url, 'compute-thread');

/** A message from a compute thread: the slot it filled. */
export type ThreadReply = { slot: number };

/** Computes on a worker thread of its own, one window after another in the order asked. */
export function threadComputer(setup: ComputeSetup): WindowComputer {
  const worker = startThread(THREAD_MAIN, setup);
  const waiting: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  const failAll = (error: Error): void => {
    for (const pending of waiting.splice(0)) pending.reject(error);
  };
  worker.on('message', () => waiting.shift()?.resolve());
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the compute thread ended (${code})`)));
  return {
    compute: (slot, width, height) =>
      new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        worker.postMessage({ slot, width, height });
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}
