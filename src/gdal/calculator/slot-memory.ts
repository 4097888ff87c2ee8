/**
 * The buffers of the windows in flight, all in one shared memory: GDAL reads into them and writes
 * from them, and the computing threads see them without copies.
 */
import { FLOAT32, FLOAT64, type PixelArray, type PixelType } from '../pixels.js';
import type { LevelSize, LevelSums } from './pyramid.js';

/** Bytes of a WebAssembly memory page. */
const WASM_PAGE_BYTES = 65536;

/** Arrays placed one after another in one memory, each on 16 bytes. */
class MemoryLayout {
  private size = 0;

  /** The byte offset of an array of `bytes` bytes. */
  place(bytes: number): number {
    const offset = this.size;
    this.size += Math.ceil(bytes / 16) * 16;
    return offset;
  }

  /** A shared memory of whole pages that holds every array placed: threads can see it too. */
  createMemory(): WebAssembly.Memory {
    const pages = Math.max(1, Math.ceil(this.size / WASM_PAGE_BYTES));
    return new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  }
}

/** The buffers of one window in flight. */
export interface WindowSlot {
  /** One array per input band, in the order of the kernel's inputs. */
  inputs: PixelArray[];
  output: Float32Array;
  /** One array per overview level, finest first. */
  overviews: Float32Array[];
  /** The sums and counts of each overview level, finest first, while the window is reduced. */
  levels: LevelSums[];
}

/** Where each array of a slot goes: its type, length and byte offset. */
interface Placement {
  type: PixelType;
  length: number;
  offset: number;
}

function place(layout: MemoryLayout, type: PixelType, length: number): Placement {
  return { type, length, offset: layout.place(length * type.bytes) };
}

const view = (buffer: ArrayBufferLike, { type, offset, length }: Placement): PixelArray =>
  type.view(buffer, offset, length);

/**
 * `count` slots for windows of at most `pixels` pixels, with an array per input of `inputs` and
 * one per overview level of `levels` (and its sums and counts).
 */
export function createSlots(
  count: number,
  inputs: readonly PixelType[],
  pixels: number,
  levels: readonly LevelSize[],
): WindowSlot[] {
  const layout = new MemoryLayout();
  // The kernel reads a pixel of every input before it writes that pixel: the output can take a
  // Float32 input's buffer.
  const shareOutput = inputs.includes(FLOAT32);
  const placements = Array.from({ length: count }, () => ({
    inputs: inputs.map((type) => place(layout, type, pixels)),
    output: shareOutput ? undefined : place(layout, FLOAT32, pixels),
    overviews: levels.map(({ width, height }) => place(layout, FLOAT32, width * height)),
    levels: levels.map(({ width, height }) => ({
      sums: place(layout, FLOAT64, width * height),
      counts: place(layout, FLOAT64, width * height),
    })),
  }));
  const memory = layout.createMemory();
  const slots = placements.map((placement) => {
    const arrays = placement.inputs.map((input) => view(memory.buffer, input));
    const float = arrays.find((array) => array instanceof Float32Array);
    return {
      inputs: arrays,
      output: placement.output ? (view(memory.buffer, placement.output) as Float32Array) : (float as Float32Array),
      overviews: placement.overviews.map((level) => view(memory.buffer, level) as Float32Array),
      levels: placement.levels.map(({ sums, counts }) => ({
        sums: view(memory.buffer, sums) as Float64Array,
        counts: view(memory.buffer, counts) as Float64Array,
      })),
    };
  });
  return slots;
}
