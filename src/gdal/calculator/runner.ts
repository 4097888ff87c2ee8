/**
 * Evaluates a compiled expression window by window on every core: one computer per core (the
 * main thread and worker threads), and one lane more than computers, so that every computer has
 * a window to compute while GDAL reads or writes the extra lane's. A lane owns one slot of
 * buffers, so memory stays flat whatever the raster size.
 */
import { availableParallelism } from 'node:os';

import { planWindows, type Window } from '../windows.js';
import type { ExpressionNode } from './ast.js';
import type { InputBand } from './inputs.js';
import { OUTPUT_BLOCK, OUTPUT_NO_DATA, type OutputRaster } from './output.js';
import { levelSizes } from './pyramid.js';
import {
  type ComputeSetup,
  createSlot,
  inlineComputer,
  threadComputer,
  type WindowComputer,
  type WindowSlot,
} from './window-compute.js';

/**
 * Pixels per window: 256 Ki pixels (1024 x 256 where the raster is that wide) keep the slots of
 * three lanes within about 7 MiB. Windows of 512 Ki read strip-organised inputs in half the reads
 * (a read per row and window) but took the bench's peak RSS to 151 MiB.
 */
const WINDOW_PIXELS = 1 << 18;

/** Told after each window is written: `done` windows of `total`. */
export type WindowProgress = (done: number, total: number) => void;

function readWindow(inputs: readonly InputBand[], w: Window, slot: WindowSlot): Promise<unknown> {
  return Promise.all(
    inputs.map((input, j) => input.band.pixels.readAsync(w.x, w.y, w.width, w.height, slot.inputs[j])),
  );
}

async function writeWindow(output: OutputRaster, w: Window, slot: WindowSlot): Promise<void> {
  const writes = levelSizes(w.width, w.height, output.factors.length).map((size, level) => {
    const factor = output.factors[level] as number;
    const band = output.overviews[level] as OutputRaster['band'];
    return band.pixels.writeAsync(w.x / factor, w.y / factor, size.width, size.height, slot.overviews[level]);
  });
  await Promise.all([output.band.pixels.writeAsync(w.x, w.y, w.width, w.height, slot.output), ...writes]);
  // Written tiles go to the file now rather than fill GDAL's block cache.
  await output.dataset.flushAsync();
}

/** The main thread and one worker thread per other core. */
function startComputers(setup: ComputeSetup, count: number): WindowComputer[] {
  return [inlineComputer(setup), ...Array.from({ length: count - 1 }, () => threadComputer(setup))];
}

/** Hands out windows in order to lanes until all are done or one lane fails; then waits for every lane. */
class WindowQueue {
  private next = 0;
  private done = 0;
  private failure: Error | undefined;

  constructor(
    readonly windows: readonly Window[],
    private readonly progress?: WindowProgress,
  ) {}

  async lane(work: (w: Window) => Promise<void>): Promise<void> {
    while (this.failure === undefined && this.next < this.windows.length) {
      const w = this.windows[this.next++] as Window;
      try {
        await work(w);
      } catch (error) {
        this.failure ??= error instanceof Error ? error : new Error(String(error));
        return;
      }
      this.done += 1;
      this.progress?.(this.done, this.windows.length);
    }
  }

  async run(lanes: Array<Promise<void>>): Promise<void> {
    await Promise.all(lanes);
    if (this.failure !== undefined) throw this.failure;
  }
}

export async function runCalculation(
  tree: ExpressionNode,
  inputs: readonly InputBand[],
  output: OutputRaster,
  progress?: WindowProgress,
): Promise<void> {
  const { x: width, y: height } = output.band.size;
  // Windows cover whole tiles, and start on multiples of every overview factor.
  const align = Math.max(OUTPUT_BLOCK, output.factors.at(-1) ?? 1);
  const windows = planWindows(width, height, { x: align, y: align }, WINDOW_PIXELS);
  const first = windows[0] as Window;
  const count = Math.max(1, Math.min(availableParallelism(), windows.length - 1));
  const levels = levelSizes(first.width, first.height, output.factors.length);
  const slots = Array.from({ length: count + 1 }, () =>
    createSlot(
      inputs.map((input) => input.type),
      first.width * first.height,
      levels,
    ),
  );
  const computers = startComputers(
    {
      tree,
      inputs: inputs.map((input) => ({ key: input.key, storage: input.type.storage, noData: input.noData })),
      noData: OUTPUT_NO_DATA,
      levelCount: levels.length,
      maxWidth: first.width,
      maxHeight: first.height,
      slots,
    },
    count,
  );
  const queue = new WindowQueue(windows, progress);
  try {
    await queue.run(
      slots.map((slot, index) => {
        const computer = computers[index % count] as WindowComputer;
        return queue.lane(async (w) => {
          await readWindow(inputs, w, slot);
          await computer.compute(index, w.width, w.height);
          await writeWindow(output, w, slot);
        });
      }),
    );
  } finally {
    await Promise.all(computers.map((computer) => computer.close()));
  }
}
