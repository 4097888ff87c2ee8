/**
 * The WebAssembly binary format, as far as the calculator's SIMD kernels use it: a module that
 * imports one shared memory and exports one function. Written by code, byte by byte, so that no
 * toolchain is needed to build the kernels.
 */

/** Value types. */
/** Bytes of a WebAssembly memory page. */
export const WASM_PAGE_BYTES = 65536;
export const I32 = 0x7f;
export const V128 = 0x7b;

/** Core instructions. */
export const OP = {
  block: 0x02,
  loop: 0x03,
  br: 0x0c,
  brIf: 0x0d,
  end: 0x0b,
  localGet: 0x20,
  localSet: 0x21,
  i32Const: 0x41,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  /** The empty block type. */
  void: 0x40,
} as const;

/** Instructions of the SIMD proposal, written after the 0xfd prefix. */
export const SIMD = {
  load: 0x00,
  store: 0x0b,
  const: 0x0c,
  shuffle: 0x0d,
  f64x2Eq: 0x47,
  f64x2Ne: 0x48,
  f64x2Lt: 0x49,
  f64x2Gt: 0x4a,
  f64x2Le: 0x4b,
  f64x2Ge: 0x4c,
  and: 0x4e,
  andNot: 0x4f,
  or: 0x50,
  bitselect: 0x52,
  /** Stores one 64-bit lane (memory alignment and offset, then the lane). */
  store64Lane: 0x5b,
  f32x4DemoteF64x2Zero: 0x5e,
  f64x2PromoteLowF32x4: 0x5f,
  f64x2Abs: 0xec,
  f64x2Neg: 0xed,
  f64x2Sqrt: 0xef,
  f64x2Add: 0xf0,
  f64x2Sub: 0xf1,
  f64x2Mul: 0xf2,
  f64x2Div: 0xf3,
  f64x2Min: 0xf4,
  f64x2Max: 0xf5,
} as const;

const bytes = (...runs: Array<[number, number]>): number[] =>
  runs.flatMap(([from, count]) => Array.from({ length: count }, (_, i) => from + i));

/** Lane selections of i8x16.shuffle: bytes 0-15 of its first operand, 16-31 of its second. */
export const LANES = {
  /** The upper two Float32 of a v128 moved down. */
  upperHalf: bytes([8, 8], [0, 8]),
  /** The low double of each operand. */
  lowHalves: bytes([0, 8], [16, 8]),
  /** The high double of each operand. */
  highHalves: bytes([8, 8], [24, 8]),
  /** Float32 lanes 0 and 2 of each operand. */
  evenFloats: bytes([0, 4], [8, 4], [16, 4], [24, 4]),
  /** Float32 lanes 1 and 3 of each operand. */
  oddFloats: bytes([4, 4], [12, 4], [20, 4], [28, 4]),
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

/** A v128 of two copies of `value`. */
export function f64x2Splat(value: number): number[] {
  const bytes = [...new Uint8Array(new Float64Array([value, value]).buffer)];
  return simd(SIMD.const, ...bytes);
}

export function localGet(index: number): number[] {
  return [OP.localGet, ...unsignedLeb(index)];
}

export function localSet(index: number): number[] {
  return [OP.localSet, ...unsignedLeb(index)];
}

export interface FunctionSpec {
  params: number[];
  /** Extra locals, as [count, type] runs. */
  locals: Array<[number, number]>;
  body: number[];
}

/**
 * A module importing `env.memory` (shared, of `pages` pages of 64 KiB) and exporting the function
 * as `run`.
 */
export function moduleBytes(fn: FunctionSpec, pages: number): Uint8Array<ArrayBuffer> {
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
