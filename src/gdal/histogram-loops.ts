/**
 * The two passes of a binned histogram over a band's windows (WindowKernels), and their
 * JavaScript form: two hot loops generated per typed-array type and per "has a no-data value to
 * skip", and cached. Each generated function only ever sees one array type and one shape of test,
 * so V8 keeps it monomorphic: a single shared loop slowed down several times once it had seen NaN
 * and integer no-data values (docs/jobs.md). Numbers are passed in a
 * Float64Array so they always arrive as doubles. The sources below are constants; nothing from a
 * request reaches them.
 */
import type { BinEdges, ValueRange } from './histogram-bins.js';
import type { PixelArray, PixelType } from './pixels.js';

/** A pass over windows, one after another: `add` takes the first `n` pixels of each. */
export interface WindowPass<Result> {
  add(pixels: PixelArray, n: number): void;
  result(): Result;
}

/**
 * The two passes of a band: the range of its valid pixels (null when none), then their counts in
 * bins. Pixels equal to `noData`, and NaN, are not valid. Windows are read into `buffers`, in turn.
 */
export interface WindowKernels {
  readonly buffers: readonly [PixelArray, PixelArray];
  rangeScan(noData: number): WindowPass<ValueRange | null>;
  binning(bins: BinEdges, noData: number): WindowPass<number[]>;
}

/** state: [min so far, max so far, no-data]. NaN pixels fail both comparisons, so they are skipped. */
type ScanLoop = (pixels: PixelArray, n: number, state: Float64Array) => void;
/** state: [lowest edge, highest edge, bins per unit, no-data]; counts: BIN_LANES tables of the bins, one after the other. */
type BinLoop = (pixels: PixelArray, n: number, state: Float64Array, edges: Float64Array, counts: Float64Array) => void;

/** The test that leaves a pixel out when it is the no-data value, or none. */
type Skip = (v: string) => string;

const SCAN_ONE = (v: string, skip: Skip): string => `
      if (${v} < min${skip(v)}) min = ${v};
      if (${v} > max${skip(v)}) max = ${v};`;

// Four pixels at a time: once the range has settled, most quads lie inside it and take one test.
const SCAN = (skip: Skip): string => `
  let min = state[0], max = state[1];
  const noData = state[2];
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const a = pixels[i], b = pixels[i + 1], c = pixels[i + 2], d = pixels[i + 3];
    if (a >= min && a <= max && b >= min && b <= max && c >= min && c <= max && d >= min && d <= max) continue;
    ${['a', 'b', 'c', 'd'].map((v) => SCAN_ONE(v, skip)).join('')}
  }
  for (; i < n; i++) {
    const v = pixels[i];${SCAN_ONE('v', skip)}
  }
  state[0] = min;
  state[1] = max;`;

/**
 * Counts go to BIN_LANES interleaved tables, pixel i to table i % BIN_LANES: neighbouring pixels
 * of a smooth raster fall in one bin, and a single table makes each increment wait for the
 * previous one's store (measured on a smooth Float32 band: a quarter less time than one table).
 */
const BIN_LANES = 4;

// The first guess is refined against the edges exactly as numpy does; the last bin takes the top edge.
const BIN_ONE = (index: string, lane: string, skip: Skip): string => `
    v = pixels[${index}];
    if (v >= low && v <= high${skip('v')}) {
      k = ((v - low) * norm) | 0;
      if (k > last) k = last;
      if (v < edges[k]) k--;
      else if (k !== last && v >= edges[k + 1]) k++;
      counts[k${lane}]++;
    }`;

const BIN = (skip: Skip): string => `
  const low = state[0], high = state[1], norm = state[2], noData = state[3];
  const lane = (counts.length / ${BIN_LANES}) | 0, last = lane - 1;
  let v = 0, k = 0, i = 0;
  for (; i + ${BIN_LANES - 1} < n; i += ${BIN_LANES}) {
    ${Array.from({ length: BIN_LANES }, (_, j) => BIN_ONE(j === 0 ? 'i' : `i + ${j}`, j === 0 ? '' : ` + ${j} * lane`, skip)).join('')}
  }
  for (; i < n; i++) {${BIN_ONE('i', '', skip)}
  }`;

/** Adds the BIN_LANES tables of `counts` into one of `count` bins. */
function foldLanes(counts: Float64Array, count: number): number[] {
  const folded = new Array<number>(count).fill(0);
  for (let i = 0; i < counts.length; i++) folded[i % count] = (folded[i % count] as number) + (counts[i] as number);
  return folded;
}

const NOT_NO_DATA: Skip = (v) => ` && ${v} !== noData`;
const KEEP_ALL: Skip = () => '';

const cache = new Map<string, ScanLoop | BinLoop>();

function generated<T extends ScanLoop | BinLoop>(key: string, params: string[], body: string): T {
  let loop = cache.get(key);
  if (!loop) {
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- loops are generated per data type
    loop = new Function(...params, `"use strict";${body}`) as T;
    cache.set(key, loop);
  }
  return loop as T;
}

function scanLoop(pixels: PixelArray, skipNoData: boolean): ScanLoop {
  const key = `scan:${pixels.constructor.name}:${skipNoData}`;
  return generated<ScanLoop>(key, ['pixels', 'n', 'state'], SCAN(skipNoData ? NOT_NO_DATA : KEEP_ALL));
}

function binLoop(pixels: PixelArray, skipNoData: boolean): BinLoop {
  const key = `bin:${pixels.constructor.name}:${skipNoData}`;
  return generated<BinLoop>(key, ['pixels', 'n', 'state', 'edges', 'counts'], BIN(skipNoData ? NOT_NO_DATA : KEEP_ALL));
}

/** The passes as the generated loops compute them, for windows of at most `pixels` pixels of `type`. */
export function scriptKernels(type: PixelType, pixels: number): WindowKernels {
  return {
    buffers: [type.create(pixels), type.create(pixels)],
    rangeScan: (noData) => {
      const state = Float64Array.of(Infinity, -Infinity, noData);
      const skip = !Number.isNaN(noData);
      return {
        add: (pixels, n) => scanLoop(pixels, skip)(pixels, n, state),
        result: () => {
          const [min, max] = state as unknown as [number, number];
          return min <= max ? { min, max } : null;
        },
      };
    },
    binning: (bins, noData) => {
      const low = bins.edges[0] as number;
      const high = bins.edges[bins.count] as number;
      const state = Float64Array.of(low, high, bins.norm, noData);
      // The no-data test is only needed when the no-data value falls inside the bins.
      const skip = noData >= low && noData <= high;
      const counts = new Float64Array(bins.count * BIN_LANES);
      return {
        add: (pixels, n) => binLoop(pixels, skip)(pixels, n, state, bins.edges, counts),
        result: () => foldLanes(counts, bins.count),
      };
    },
  };
}
