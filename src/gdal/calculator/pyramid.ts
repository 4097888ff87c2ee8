/**
 * Overviews computed while the output is written, from each window of full-resolution pixels,
 * instead of reading the finished file back (which took longer than the calculation itself).
 * Every overview pixel is the mean of the valid full-resolution pixels it covers, as GDAL's
 * AVERAGE resampling defines it: each level keeps sums and counts, so a coarser level is the exact
 * mean of its whole footprint, not a mean of means. Windows must start on multiples of the largest
 * factor so each one maps onto whole overview pixels.
 */

export interface OverviewPiece {
  /** The level's pixels for this window, row-major, `width * height` of them. */
  data: Float32Array;
  width: number;
  height: number;
}

interface Level {
  sums: Float64Array;
  counts: Float64Array;
  /** Output pixels, one array per slot so one can be written while the next window is reduced. */
  values: [Float32Array, Float32Array];
}

const half = (n: number): number => Math.ceil(n / 2);

export class OverviewPyramid {
  private readonly levels: Level[] = [];

  constructor(
    levelCount: number,
    maxWidth: number,
    maxHeight: number,
    private readonly noData: number,
  ) {
    let [w, h] = [maxWidth, maxHeight];
    for (let level = 0; level < levelCount; level++) {
      [w, h] = [half(w), half(h)];
      const size = w * h;
      this.levels.push({
        sums: new Float64Array(size),
        counts: new Float64Array(size),
        values: [new Float32Array(size), new Float32Array(size)],
      });
    }
  }

  /** The overview pixels of a window of full-resolution values (no-data marked with `noData`). */
  reduce(pixels: Float32Array, width: number, height: number, slot: 0 | 1): OverviewPiece[] {
    const pieces: OverviewPiece[] = [];
    let [w, h] = [width, height];
    this.levels.forEach((level, i) => {
      const previous = this.levels[i - 1];
      if (previous) this.fromLevel(previous, level, w, h, slot);
      else this.fromPixels(pixels, level, w, h, slot);
      [w, h] = [half(w), half(h)];
      pieces.push({ data: level.values[slot], width: w, height: h });
    });
    return pieces;
  }

  private fromPixels(pixels: Float32Array, level: Level, w: number, h: number, slot: 0 | 1): void {
    const { sums, counts } = level;
    const values = level.values[slot];
    const noData = this.noData;
    const ow = half(w);
    const evenW = w - (w % 2);
    const evenH = h - (h % 2);
    for (let y = 0; y < evenH; y += 2) {
      const top = y * w;
      const bottom = top + w;
      let o = (y >> 1) * ow;
      for (let x = 0; x < evenW; x += 2, o++) {
        const a = pixels[top + x] as number;
        const b = pixels[top + x + 1] as number;
        const c = pixels[bottom + x] as number;
        const d = pixels[bottom + x + 1] as number;
        if (a !== noData && b !== noData && c !== noData && d !== noData) {
          const sum = a + b + c + d;
          sums[o] = sum;
          counts[o] = 4;
          values[o] = sum * 0.25;
        } else {
          let sum = 0;
          let count = 0;
          for (const v of [a, b, c, d]) {
            if (v !== noData) {
              sum += v;
              count++;
            }
          }
          this.store(level, slot, o, sum, count);
        }
      }
    }
    // The odd last column and row, when there are any, cover fewer pixels.
    if (evenW < w)
      for (let y = 0; y < h; y += 2) this.block(pixels, w, h, evenW, y, (y >> 1) * ow + (evenW >> 1), level, slot);
    if (evenH < h)
      for (let x = 0; x < evenW; x += 2) this.block(pixels, w, h, x, evenH, (evenH >> 1) * ow + (x >> 1), level, slot);
  }

  /** One overview pixel from the up to 2 x 2 valid pixels at (x, y). */
  private block(
    pixels: Float32Array,
    w: number,
    h: number,
    x: number,
    y: number,
    o: number,
    level: Level,
    slot: 0 | 1,
  ): void {
    let sum = 0;
    let count = 0;
    for (let r = y; r < Math.min(y + 2, h); r++) {
      for (let c = x; c < Math.min(x + 2, w); c++) {
        const v = pixels[r * w + c] as number;
        if (v !== this.noData) {
          sum += v;
          count++;
        }
      }
    }
    this.store(level, slot, o, sum, count);
  }

  /** Adds each pixel's sum and count into the overview pixel covering it, then takes the means. */
  private fromLevel(previous: Level, level: Level, w: number, h: number, slot: 0 | 1): void {
    const { sums, counts } = level;
    const ow = half(w);
    const size = ow * half(h);
    sums.fill(0, 0, size);
    counts.fill(0, 0, size);
    const [inSums, inCounts] = [previous.sums, previous.counts];
    for (let r = 0; r < h; r++) {
      const from = r * w;
      let o = (r >> 1) * ow;
      for (let c = 0; c < w; c += 2, o++) {
        // Past the last column of an odd width, the pair's second pixel adds nothing.
        const next = c + 1 < w ? from + c + 1 : -1;
        sums[o] = (sums[o] as number) + (inSums[from + c] as number) + (next < 0 ? 0 : (inSums[next] as number));
        counts[o] =
          (counts[o] as number) + (inCounts[from + c] as number) + (next < 0 ? 0 : (inCounts[next] as number));
      }
    }
    const values = level.values[slot];
    for (let o = 0; o < size; o++) {
      const count = counts[o] as number;
      values[o] = count > 0 ? (sums[o] as number) / count : this.noData;
    }
  }

  private store(level: Level, slot: 0 | 1, o: number, sum: number, count: number): void {
    level.sums[o] = sum;
    level.counts[o] = count;
    level.values[slot][o] = count > 0 ? sum / count : this.noData;
  }
}
