/**
 * The overview pyramid's 2 x 2 reductions (pyramid.ts) as WebAssembly SIMD kernels over runs of
 * a row pair in the slots' shared memory. They compute what the pyramid computes one pixel at a
 * time, bit for bit: the sums in doubles in the same order, the counts, and the means rounded to
 * Float32 once. A full-resolution pixel equal to the no-data value counts for nothing: it adds -0,
 * which leaves any sum as it was, and a block with one sums from +0, as the one-pixel code does.
 */
import {
  advance,
  compileFunction,
  f64x2Splat,
  I32,
  LANES,
  localGet,
  localSet,
  loopUntil,
  OP,
  SIMD,
  simd,
  V128,
} from '../wasm-module.js';

/** Full-resolution columns a step of the pixel kernel reduces: two v128 of Float32 a row. */
export const PIXEL_STEP_COLUMNS = 8;
/** Columns of sums a step of the level kernel reduces: two v128 of doubles a row. */
export const LEVEL_STEP_COLUMNS = 4;

/** A level's sums and counts of valid full-resolution pixels, row-major with the widths of pyramid.ts's levelSizes. */
export interface LevelSums {
  sums: Float64Array;
  counts: Float64Array;
}

/**
 * Reduces columns [0, columns) of two rows of `source` (`top` and `bottom` index their first
 * columns) into a level's sums, counts and `values`, from output `o` on.
 */
type RowPairReduction<Source> = (
  source: Source,
  top: number,
  bottom: number,
  columns: number,
  level: LevelSums,
  values: Float32Array,
  o: number,
) => void;

export interface SimdReductions {
  /** From full-resolution pixels; `columns` a multiple of PIXEL_STEP_COLUMNS. */
  fromPixels: RowPairReduction<Float32Array>;
  /** From a finer level's sums and counts; `columns` a multiple of LEVEL_STEP_COLUMNS. */
  fromLevel: RowPairReduction<LevelSums>;
}

const load = (pointer: number, offset: number): number[] => [...localGet(pointer), ...simd(SIMD.load, 4, offset)];

/** The mean of each lane's sum, or the no-data value where its count is 0, rounded to Float32 in the low lanes. */
const mean = (sum: number, count: number, noData: number): number[] => [
  ...localGet(sum),
  ...localGet(count),
  ...simd(SIMD.f64x2Div),
  ...f64x2Splat(noData),
  ...localGet(count),
  ...f64x2Splat(0),
  ...simd(SIMD.f64x2Gt),
  ...simd(SIMD.bitselect),
  ...simd(SIMD.f32x4DemoteF64x2Zero),
];

/** Parameters and locals of the pixel kernel. */
const P = {
  top: 0,
  bottom: 1,
  end: 2,
  sums: 3,
  counts: 4,
  values: 5,
  /** The four corners of four blocks: top-left, top-right, bottom-left, bottom-right. */
  corners: 6,
  /** Two blocks' corners as doubles, then whether each is valid. */
  lanes: 10,
  valid: 14,
  sum: 18,
  count: 19,
  low: 20,
  high: 21,
};

/** One half (two blocks) of a step: sums and counts stored, the means left in the low lanes of local `into`. */
function pixelHalf(h: number, noData: number, into: number): number[] {
  const corners = [0, 1, 2, 3];
  const lanes = corners.flatMap((i) => [
    ...localGet(P.corners + i),
    ...(h === 0 ? [] : [...localGet(P.corners + i), ...simd(SIMD.shuffle, ...LANES.upperHalf)]),
    ...simd(SIMD.f64x2PromoteLowF32x4),
    ...localSet(P.lanes + i),
    ...localGet(P.lanes + i),
    ...f64x2Splat(noData),
    ...simd(SIMD.f64x2Ne),
    ...localSet(P.valid + i),
  ]);
  // -0 where every corner is valid (so the sum is the corners' own), +0 where some is not.
  const start = [
    ...f64x2Splat(-0),
    ...f64x2Splat(0),
    ...corners.flatMap((i) => [...localGet(P.valid + i), ...(i > 0 ? simd(SIMD.and) : [])]),
    ...simd(SIMD.bitselect),
  ];
  const sum = corners.flatMap((i) => [
    ...localGet(P.lanes + i),
    ...f64x2Splat(-0),
    ...localGet(P.valid + i),
    ...simd(SIMD.bitselect),
    ...simd(SIMD.f64x2Add),
  ]);
  const count = corners.flatMap((i) => [
    ...localGet(P.valid + i),
    ...f64x2Splat(1),
    ...simd(SIMD.and),
    ...(i > 0 ? simd(SIMD.f64x2Add) : []),
  ]);
  return [
    ...lanes,
    ...start,
    ...sum,
    ...localSet(P.sum),
    ...count,
    ...localSet(P.count),
    ...[...localGet(P.sums), ...localGet(P.sum), ...simd(SIMD.store, 4, 16 * h)],
    ...[...localGet(P.counts), ...localGet(P.count), ...simd(SIMD.store, 4, 16 * h)],
    ...mean(P.sum, P.count, noData),
    ...localSet(into),
  ];
}

function pixelKernel(noData: number): number[] {
  const corners = [
    [P.top, LANES.evenFloats],
    [P.top, LANES.oddFloats],
    [P.bottom, LANES.evenFloats],
    [P.bottom, LANES.oddFloats],
  ] as const;
  const step = [
    ...corners.flatMap(([row, lanes], i) => [
      ...load(row, 0),
      ...load(row, 16),
      ...simd(SIMD.shuffle, ...lanes),
      ...localSet(P.corners + i),
    ]),
    ...pixelHalf(0, noData, P.low),
    ...pixelHalf(1, noData, P.high),
    ...[...localGet(P.values), ...localGet(P.low), ...localGet(P.high), ...simd(SIMD.shuffle, ...LANES.lowHalves)],
    ...simd(SIMD.store, 4, 0),
    ...[P.top, P.bottom, P.sums, P.counts].flatMap((pointer) => advance(pointer, 32)),
    ...advance(P.values, 16),
  ];
  return loopUntil([...localGet(P.top), ...localGet(P.end), OP.i32GeU], step);
}

/** Parameters and locals of the level kernel. */
const L = {
  topSums: 0,
  topCounts: 1,
  bottomSums: 2,
  bottomCounts: 3,
  end: 4,
  sums: 5,
  counts: 6,
  values: 7,
  first: 8,
  second: 9,
  sum: 10,
  count: 11,
};

/** Each pair of adjacent columns of a row added, two pairs: the sums' order of the one-pixel code. */
const pairs = (row: number): number[] => [
  ...load(row, 0),
  ...localSet(L.first),
  ...load(row, 16),
  ...localSet(L.second),
  ...[...localGet(L.first), ...localGet(L.second), ...simd(SIMD.shuffle, ...LANES.lowHalves)],
  ...[...localGet(L.first), ...localGet(L.second), ...simd(SIMD.shuffle, ...LANES.highHalves)],
  ...simd(SIMD.f64x2Add),
];

function levelKernel(noData: number): number[] {
  const step = [
    ...[...pairs(L.topSums), ...pairs(L.bottomSums), ...simd(SIMD.f64x2Add), ...localSet(L.sum)],
    ...[...pairs(L.topCounts), ...pairs(L.bottomCounts), ...simd(SIMD.f64x2Add), ...localSet(L.count)],
    ...[...localGet(L.sums), ...localGet(L.sum), ...simd(SIMD.store, 4, 0)],
    ...[...localGet(L.counts), ...localGet(L.count), ...simd(SIMD.store, 4, 0)],
    ...[...localGet(L.values), ...mean(L.sum, L.count, noData), ...simd(SIMD.store64Lane, 3, 0, 0)],
    ...[L.topSums, L.topCounts, L.bottomSums, L.bottomCounts].flatMap((pointer) => advance(pointer, 32)),
    ...[L.sums, L.counts].flatMap((pointer) => advance(pointer, 16)),
    ...advance(L.values, 8),
  ];
  return loopUntil([...localGet(L.topSums), ...localGet(L.end), OP.i32GeU], step);
}

type Run = (...pointers: number[]) => void;

function instantiate(body: number[], params: number, vectors: number, memory: WebAssembly.Memory): Run {
  return compileFunction<Run>(
    { params: Array.from({ length: params }, () => I32), locals: [[vectors, V128]], body },
    memory,
  );
}

const F32 = Float32Array.BYTES_PER_ELEMENT;
const F64 = Float64Array.BYTES_PER_ELEMENT;

/** The kernels for a pyramid whose full-resolution no-data value is `noData`, on arrays in `memory`. */
export function compileSimdReductions(noData: number, memory: WebAssembly.Memory): SimdReductions {
  const fromPixels = instantiate(pixelKernel(noData), 6, 16, memory);
  const fromLevel = instantiate(levelKernel(noData), 8, 4, memory);
  return {
    fromPixels: (pixels, top, bottom, columns, level, values, o) =>
      fromPixels(
        pixels.byteOffset + top * F32,
        pixels.byteOffset + bottom * F32,
        pixels.byteOffset + (top + columns) * F32,
        level.sums.byteOffset + o * F64,
        level.counts.byteOffset + o * F64,
        values.byteOffset + o * F32,
      ),
    fromLevel: (finer, top, bottom, columns, level, values, o) =>
      fromLevel(
        finer.sums.byteOffset + top * F64,
        finer.counts.byteOffset + top * F64,
        finer.sums.byteOffset + bottom * F64,
        finer.counts.byteOffset + bottom * F64,
        finer.sums.byteOffset + (top + columns) * F64,
        level.sums.byteOffset + o * F64,
        level.counts.byteOffset + o * F64,
        values.byteOffset + o * F32,
      ),
  };
}
