/**
 * Evaluates a compiled expression window by window: while one window is computed on the main
 * thread, the next one is read and the previous one is compressed and written by GDAL's threads.
 * Two sets of buffers are used in turn, so memory stays flat whatever the raster size.
 */
import { type PixelArray } from '../pixels.js';
import { planWindows, type Window } from '../windows.js';
import type { Kernel } from './compiler.js';
import type { InputBand } from './inputs.js';
import { OUTPUT_BLOCK, OUTPUT_NO_DATA, type OutputRaster } from './output.js';
import { type OverviewPiece, OverviewPyramid } from './pyramid.js';

/** Pixels per window: 2 Mi pixels is 256 rows of 8192 pixels. */
const WINDOW_PIXELS = 1 << 21;

type Slot = 0 | 1;

class Buffers {
  readonly inputs: PixelArray[][];
  readonly outputs: Float32Array[];

  constructor(inputs: readonly InputBand[], pixels: number) {
    this.inputs = [0, 1].map(() => inputs.map((input) => input.type.create(pixels)));
    this.outputs = [new Float32Array(pixels), new Float32Array(pixels)];
  }
}

function writeWindow(output: OutputRaster, w: Window, pixels: Float32Array, pieces: OverviewPiece[]): Promise<unknown> {
  const writes = pieces.map((piece, level) => {
    const factor = output.factors[level] as number;
    return output.overviews[level]?.pixels.writeAsync(
      w.x / factor,
      w.y / factor,
      piece.width,
      piece.height,
      piece.data,
    );
  });
  return Promise.all([output.band.pixels.writeAsync(w.x, w.y, w.width, w.height, pixels), ...writes]);
}

/** Told after each window is computed: `done` windows of `total`. */
export type WindowProgress = (done: number, total: number) => void;

export async function runCalculation(
  kernel: Kernel,
  inputs: readonly InputBand[],
  output: OutputRaster,
  progress?: WindowProgress,
): Promise<void> {
  const { x: width, y: height } = output.band.size;
  // Windows cover whole tiles, and start on multiples of every overview factor.
  const align = Math.max(OUTPUT_BLOCK, output.factors.at(-1) ?? 1);
  const windows = planWindows(width, height, { x: align, y: align }, WINDOW_PIXELS);
  const first = windows[0] as Window;
  const buffers = new Buffers(inputs, first.width * first.height);
  const pyramid = new OverviewPyramid(output.factors.length, first.width, first.height, OUTPUT_NO_DATA);
  const read = (i: number): Promise<PixelArray[]> | undefined => {
    const w = windows[i];
    const slot = buffers.inputs[i % 2] as PixelArray[];
    return (
      w && Promise.all(inputs.map((input, j) => input.band.pixels.readAsync(w.x, w.y, w.width, w.height, slot[j])))
    );
  };
  const writes: Array<Promise<unknown>> = [Promise.resolve(), Promise.resolve()];
  let pending = read(0);
  try {
    for (let i = 0; pending; i++) {
      const w = windows[i] as Window;
      const slot = (i % 2) as Slot;
      const pixels = await pending;
      pending = read(i + 1);
      await writes[slot];
      const out = buffers.outputs[slot] as Float32Array;
      kernel(w.width * w.height, out, pixels);
      writes[slot] = writeWindow(output, w, out, pyramid.reduce(out, w.width, w.height, slot));
      progress?.(i + 1, windows.length);
    }
    await Promise.all(writes);
    await output.dataset.flushAsync();
  } finally {
    // After a failure, let reads and writes in flight settle before the datasets are closed.
    await Promise.allSettled([pending, ...writes]);
  }
}
