/**
 * The WebAssembly binary format, as far as the histogram's SIMD kernels use it: a module that imports one shared memory and exports one function. Written by code, byte by
 * byte, so that no toolchain is needed to build the kernels.
 */

/** Bytes of a WebAssembly memory page. */
const WASM_PAGE_BYTES = 65536;
/** Value types. */
export const I32 = 0x7f;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;

/** Core instructions. */
export const OP = {
  block: 0x02,
  loop: 0x03,
  br: 0x0c,
  brIf: 0x0d,
  end: 0x0b,
  if: 0x04,
  localGet: 0x20,
  localSet: 0x21,
  /** Loads and stores take the alignment (log2 of bytes) and the offset after the opcode. */
  f32Load: 0x2a,
  f64Load: 0x2b,
  f64Store: 0x39,
  i32Const: 0x41,
  f64Const: 0x44,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Shl: 0x74,
  f64Add: 0xa0,
  f64PromoteF32: 0xbb,
  /** The empty block type. */
  void: 0x40,
} as const;

/** Instructions of the SIMD proposal, written after the 0xfd prefix. */
export const SIMD = {
  load: 0x00,
  store: 0x0b,
  const: 0x0c,
  shuffle: 0x0d,
  /** Extracting and replacing a lane take the lane after the opcode. */
  i32x4ExtractLane: 0x1b,
  f32x4ReplaceLane: 0x20,
  i32x4Splat: 0x11,
  f32x4Splat: 0x13,
  f64x2Splat: 0x14,
  i32x4Ne: 0x38,
  f32x4Ne: 0x42,
  f32x4Lt: 0x43,
  f32x4Le: 0x45,
  f32x4Ge: 0x46,
  f64x2Gt: 0x4a,
  and: 0x4e,
  andNot: 0x4f,
  bitselect: 0x52,
  /** 1 if any bit is set, else 0, as an i32. */
  anyTrue: 0x53,
  f64x2PromoteLowF32x4: 0x5f,
  i32x4Add: 0xae,
  i32x4Sub: 0xb1,
  i32x4MinS: 0xb6,
  i32x4MaxS: 0xb8,
  /** `b < a ? b : a` in each lane: a NaN in `b` leaves `a`. */
  f32x4Pmin: 0xea,
  /** `a < b ? b : a` in each lane. */
  f32x4Pmax: 0xeb,
  /** Rounded to the nearest whole number, ties to even. */
  f64x2Nearest: 0x94,
  f64x2Abs: 0xec,
  f64x2Sub: 0xf1,
  f64x2Mul: 0xf2,
  /** The two doubles truncated to integers in the low lanes, saturating (NaN to 0). */
  i32x4TruncSatF64x2SZero: 0xfc,
} as const;

const bytes = (...runs: Array<[number, number]>): number[] =>
  runs.flatMap(([from, count]) => Array.from({ length: count }, (_, i) => from + i));

/** Lane selections of i8x16.shuffle: bytes 0-15 of its first operand, 16-31 of its second. */
export const LANES = {
  /** The upper two Float32 of a v128 moved down. */
  upperHalf: bytes([8, 8], [0, 8]),
  /** The low double of each operand. */
  lowHalves: bytes([0, 8], [16, 8]),
  /** Float32 lanes 0 and 2 of each operand. */
  evenFloats: bytes([0, 4], [8, 4], [16, 4], [24, 4]),
};

export function unsignedLeb(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  do {
    const low = rest & 0x7f;
    rest >>>= 7;
    bytes.push(rest === 0 ? low : low | 0x80);
  } while (rest !== 0);
  return bytes;
}

/** A signed LEB128 number: what i32.const takes (unsignedLeb would make 64 to 127 negative). */
function signedLeb(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  for (;;) {
    const low = rest & 0x7f;
    rest >>= 7;
    const done = (rest === 0 && (low & 0x40) === 0) || (rest === -1 && (low & 0x40) !== 0);
    bytes.push(done ? low : low | 0x80);
    if (done) return bytes;
  }
}

export function i32Const(value: number): number[] {
  return [OP.i32Const, ...signedLeb(value)];
}

export function f64Const(value: number): number[] {
  return [OP.f64Const, ...new Uint8Array(Float64Array.of(value).buffer)];
}

function vector(items: number[][]): number[] {
  return [...unsignedLeb(items.length), ...items.flat()];
}

function name(text: string): number[] {
  return vector([...new TextEncoder().encode(text)].map((byte) => [byte]));
}

function section(id: number, content: number[]): number[] {
  return [id, ...unsignedLeb(content.length), ...content];
}

export function simd(op: number, ...immediates: number[]): number[] {
  return [0xfd, ...unsignedLeb(op), ...immediates];
}

/** A v128 of four copies of `value` as a Float32. */
export function f32x4Splat(value: number): number[] {
  const bytes = [...new Uint8Array(new Float32Array(4).fill(value).buffer)];
  return simd(SIMD.const, ...bytes);
}

export function localGet(index: number): number[] {
  return [OP.localGet, ...unsignedLeb(index)];
}

export function localSet(index: number): number[] {
  return [OP.localSet, ...unsignedLeb(index)];
}

/** Runs `step` until `exit` (an i32 on the stack) is true, testing before each step. */
export function loopUntil(exit: number[], step: number[]): number[] {
  return [...[OP.block, OP.void, OP.loop, OP.void], ...exit, OP.brIf, 1, ...step, ...[OP.br, 0, OP.end, OP.end]];
}

/** Adds `bytes` to the pointer in local `local`. */
export function advance(local: number, bytes: number): number[] {
  return [...localGet(local), ...i32Const(bytes), OP.i32Add, ...localSet(local)];
}

export interface FunctionSpec {
  params: number[];
  /** Extra locals, as [count, type] runs. */
  locals: Array<[number, number]>;
  body: number[];
}

/** Arrays placed one after another in one memory, each on 16 bytes, a v128's alignment. */
export class MemoryLayout {
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

/**
 * A module importing `env.memory` (shared, of `pages` pages of 64 KiB) and exporting the function
 * as `run`.
 */
function moduleBytes(fn: FunctionSpec, pages: number): Uint8Array<ArrayBuffer> {
  const type = [0x60, ...vector(fn.params.map((param) => [param])), ...vector([])];
  const sharedLimits = [0x03, ...unsignedLeb(pages), ...unsignedLeb(pages)];
  const memoryImport = [...name('env'), ...name('memory'), 0x02, ...sharedLimits];
  const code = [...vector(fn.locals.map(([count, kind]) => [...unsignedLeb(count), kind])), ...fn.body, OP.end];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector([type])),
    ...section(2, vector([memoryImport])),
    ...section(3, vector([[0]])),
    ...section(7, vector([[...name('run'), 0x00, 0]])),
    ...section(10, vector([[...unsignedLeb(code.length), ...code]])),
  ]);
}

/** The function of `fn`, compiled for `memory`. */
export function compileFunction<Run>(fn: FunctionSpec, memory: WebAssembly.Memory): Run {
  const bytes = moduleBytes(fn, memory.buffer.byteLength / WASM_PAGE_BYTES);
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
  return instance.exports['run'] as Run;
}
