/**
 * Evaluates a compiled expression window by window on every core: one core for GDAL's reads and
 * writes, one computer on each other (the main thread and worker threads; the main thread alone on
 * two cores), and one lane more than computers, so that every computer has a window to compute
 * while GDAL reads or writes the extra lane's. A lane owns one slot of buffers, so memory stays
 * flat whatever the raster size.
 */
import { availableParallelism } from 'node:os';

import { planWindows, type Window } from '../raster-windows.js';
import type { ExpressionNode } from './ast.js';
import type { InputBand } from './inputs.js';
import { OUTPUT_BLOCK, OUTPUT_NO_DATA, type OutputRaster } from './output.js';
import { levelSizes } from './pyramid.js';
import { createSlots, type WindowSlot } from './slot-memory.js';
import { type ComputeSetup, inlineComputer, threadComputer, type WindowComputer } from './window-compute.js';

/**
 * Pixels per window: 256 Ki pixels keep the slots of two lanes within about 5 MiB. Windows span
 * the raster's width where that many pixels hold the rows windowRows asks for (8000 x 32 on the
 * bench's inputs, in strips of a row): GDAL then reads a strip-organised input in one read per row
 * of the raster, where windows of 1024 x 256 took one per row and window, half the CPU time.
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
  // GDAL's block cache holds the tiles until evicted, by then complete (see CALCULATOR_CACHE_MB).
  await Promise.all([output.band.pixels.writeAsync(w.x, w.y, w.width, w.height, slot.output), ...writes]);
}

/**
 * What window rows start on a multiple of: every overview factor, and the block height of the
 * inputs whose blocks are at most a tile high, so that each of their blocks is read (or decoded) once.
 */
function windowRows(inputs: readonly InputBand[], factors: readonly number[]): number {
  const blockRows = inputs.map((input) => input.band.blockSize.y).filter((rows) => rows <= OUTPUT_BLOCK);
  return Math.max(factors.at(-1) ?? 1, ...blockRows);
}

/** The main thread and `count - 1` worker threads. */
function startComputers(setup: ComputeSetup, count: number): WindowComputer[] {
  return [inlineComputer(setup), ...Array.from({ length: count - 1 }, () => threadComputer(setup))];
}

/**
 * Hands out windows in order to lanes until all are done or one lane fails; then waits for every
 * lane. A lane asks GDAL for a window's write and for the read of its next window into the same
 * buffers at once: GDAL's asynchronous calls run one at a time, in the order asked, on the worker
 * process's one libuv thread (UV_THREADPOOL_SIZE, gdal-child.ts), so the read begins once the write
 * has ended, and the I/O thread goes on to it without waiting for this thread, which may be
 * computing a window meanwhile (it had waited about half of the bench's time). One call at a time
 * is also what keeps a read through GDAL's block cache (a resampled or compressed input) from
 * evicting, and so writing, a tile of the output while another thread writes to it, which GDAL
 * (since 3.1) guards against except when the cache is small for its threads.
 */
class WindowQueue {
  private next = 0;
  private done = 0;
  private failure: Error | undefined;

  constructor(
    readonly windows: readonly Window[],
    private readonly progress?: WindowProgress,
  ) {}

  private take(): Window | undefined {
    return this.failure === undefined ? this.windows[this.next++] : undefined;
  }

  async lane(
    read: (w: Window) => Promise<unknown>,
    compute: (w: Window) => Promise<void>,
    write: (w: Window) => Promise<void>,
  ): Promise<void> {
    let w = this.take();
    let reading = w && read(w);
    while (w && reading) {
      try {
        await reading;
        await compute(w);
        const writing = write(w);
        const next = this.take();
        reading = next && read(next);
        // Observed now, so that a failed read after a failed write is not reported unhandled.
        reading?.catch(() => undefined);
        await writing;
        w = next;
      } catch (error) {
        this.failure ??= error instanceof Error ? error : new Error(String(error));
        await reading?.catch(() => undefined);
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
  // Windows that split rows start on multiples of the tile width.
  const rows = windowRows(inputs, output.factors);
  const windows = planWindows(width, height, { x: OUTPUT_BLOCK, y: rows }, WINDOW_PIXELS);
  const first = windows[0] as Window;
  // A core is left to GDAL's reads and writes: a computer per core was slower and larger (docs/jobs.md).
  const count = Math.max(1, Math.min(availableParallelism() - 1, windows.length - 1));
  const levels = levelSizes(first.width, first.height, output.factors.length);
  const slots = createSlots(
    count + 1,
    inputs.map((input) => input.type),
    first.width * first.height,
    levels,
  );
  const computers = startComputers(
    {
      tree,
      inputs: inputs.map((input) => ({ key: input.key, storage: input.type.storage, noData: input.noData })),
      noData: OUTPUT_NO_DATA,
      slots,
    },
    count,
  );
  const queue = new WindowQueue(windows, progress);
  try {
    await queue.run(
      slots.map((slot, index) => {
        const computer = computers[index % count] as WindowComputer;
        return queue.lane(
          (w) => readWindow(inputs, w, slot),
          (w) => computer.compute(index, w.width, w.height),
          (w) => writeWindow(output, w, slot),
        );
      }),
    );
  } finally {
    await Promise.all(computers.map((computer) => computer.close()));
  }
}
