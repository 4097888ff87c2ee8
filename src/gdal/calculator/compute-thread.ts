/** A worker thread of the calculator's worker process: computes the windows it is sent (see window-compute.ts). */
import { parentPort, workerData } from 'node:worker_threads';

import { type ComputeSetup, slotComputation, type ThreadReply } from './window-compute.js';

const compute = slotComputation(workerData as ComputeSetup);
parentPort?.on('message', ({ slot, width, height }: { slot: number; width: number; height: number }) => {
  compute(slot, width, height);
  parentPort?.postMessage({ slot } satisfies ThreadReply);
});
