/**
 * Equal-width bins with the exact semantics of numpy.histogram (numpy/lib/histograms.py): edges
 * from numpy.linspace, every bin half-open except the last, which includes the maximum, and pixels
 * compared against the edges as numpy compares them. For Float32 rasters numpy works in float32
 * (the edges are rounded to float32 and pixels compared in float32); for every other pixel type
 * it works in float64. Following the same arithmetic lets a pixel lying exactly on an edge land
 * in the same bin as in numpy.
 */
import { BadRequest } from '../errors.js';

export interface RequestedRange {
  min?: number | undefined;
  max?: number | undefined;
}

export interface ValueRange {
  min: number;
  max: number;
}

/** What a client may ask of a histogram: its outer edges and its number of bins. */
export interface HistogramOptions extends RequestedRange {
  count?: number | undefined;
}

/** A band's histogram: its outer edges and the count of each bin. */
export interface BandHistogram extends ValueRange {
  values: number[];
}

/** The outer edges: the request, completed by the valid range of the band, as numpy would. */
export function resolveRange(requested: RequestedRange, valid: ValueRange | null): ValueRange {
  let first = requested.min ?? valid?.min ?? requested.max ?? 0;
  let last = requested.max ?? valid?.max ?? requested.min ?? 1;
  if (!Number.isFinite(first) || !Number.isFinite(last)) throw new BadRequest('min and max must be finite numbers.');
  if (first > last) throw new BadRequest(rangeError(requested, first, last));
  if (first === last) {
    first -= 0.5;
    last += 0.5;
  }
  return { min: first, max: last };
}

function rangeError(requested: RequestedRange, first: number, last: number): string {
  if (requested.max === undefined) return `min (${first}) is above the largest valid value of the band (${last}).`;
  if (requested.min === undefined) return `max (${last}) is below the smallest valid value of the band (${first}).`;
  return `min (${first}) must not exceed max (${last}).`;
}

export class BinEdges {
  /** Edges in the domain pixels are compared in (float32-rounded for Float32 rasters). */
  readonly edges: Float64Array;
  /** Scale of the first guess of a pixel's bin; the edges then settle it, as in numpy. */
  readonly norm: number;

  constructor(
    readonly range: ValueRange,
    readonly count: number,
    float32: boolean,
  ) {
    this.edges = linspace(range.min, range.max, count);
    if (float32) for (let i = 0; i <= count; i++) this.edges[i] = Math.fround(this.edges[i] as number);
    this.norm = count / (range.max - range.min);
  }

  /** Bin of one value, or -1 outside [first edge, last edge]. For folding value counts. */
  index(value: number): number {
    const edges = this.edges;
    const last = this.count - 1;
    if (!(value >= (edges[0] as number) && value <= (edges[this.count] as number))) return -1;
    let k = Math.trunc((value - (edges[0] as number)) * this.norm);
    if (k < 0) k = 0;
    else if (k > last) k = last;
    if (value < (edges[k] as number)) k--;
    else if (k !== last && value >= (edges[k + 1] as number)) k++;
    return k;
  }
}

/** numpy.linspace(start, stop, count + 1) in float64, operation for operation. */
function linspace(start: number, stop: number, count: number): Float64Array {
  const edges = new Float64Array(count + 1);
  const delta = stop - start;
  const step = delta / count;
  for (let i = 0; i <= count; i++) edges[i] = step === 0 ? (i / count) * delta + start : i * step + start;
  edges[count] = stop;
  return edges;
}
