/**
 * Overviews computed while the output is written, from each window of full-resolution pixels,
 * instead of reading the finished file back (which took longer than the calculation itself).
 * Every overview pixel is the mean of the valid full-resolution pixels it covers, as GDAL's
 * AVERAGE resampling defines it: each level keeps sums and counts, so a coarser level is the exact
 * mean of its whole footprint, not a mean of means. Windows must start on multiples of the largest
 * factor so each one maps onto whole overview pixels.
 */

/** A level's sums and counts of valid full-resolution pixels, row-major with the widths of levelSizes. */
export interface LevelSums {
  sums: Float64Array;
  counts: Float64Array;
}

export interface LevelSize {
  width: number;
  height: number;
}

const half = (n: number): number => Math.ceil(n / 2);

/** The sizes of the overview pixels of a `width` x `height` window, finest level first. */
export function levelSizes(width: number, height: number, levelCount: number): LevelSize[] {
  const sizes: LevelSize[] = [];
  for (let level = 0, [w, h] = [width, height]; level < levelCount; level++) {
    [w, h] = [half(w), half(h)];
    sizes.push({ width: w, height: h });
  }
  return sizes;
}

/** Reduces windows of full-resolution pixels into the overview pixels they cover. */
export class OverviewPyramid {
  constructor(private readonly noData: number) {}

  /**
   * Writes the overview pixels of a window of full-resolution values (no-data marked with
   * `noData`) into `outputs`, one array per level, row-major with the widths of levelSizes;
   * `levels` hold each level's sums and counts meanwhile.
   */
  reduce(
    pixels: Float32Array,
    width: number,
    height: number,
    levels: readonly LevelSums[],
    outputs: readonly Float32Array[],
  ): void {
    let [w, h] = [width, height];
    levels.forEach((level, i) => {
      const previous = levels[i - 1];
      const values = outputs[i] as Float32Array;
      if (previous) this.fromLevel(previous, level, w, h, values);
      else this.fromPixels(pixels, level, w, h, values);
      [w, h] = [half(w), half(h)];
    });
  }

  private fromPixels(pixels: Float32Array, level: LevelSums, w: number, h: number, values: Float32Array): void {
    const { sums, counts } = level;
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
          // Written out rather than looped over an array, which kept V8 from optimising the fast path.
          let sum = 0;
          let count = 0;
          if (a !== noData) {
            sum += a;
            count++;
          }
          if (b !== noData) {
            sum += b;
            count++;
          }
          if (c !== noData) {
            sum += c;
            count++;
          }
          if (d !== noData) {
            sum += d;
            count++;
          }
          this.store(level, values, o, sum, count);
        }
      }
    }
    // The odd last column and row, when there are any, cover fewer pixels.
    if (evenW < w)
      for (let y = 0; y < h; y += 2) this.block(pixels, w, h, evenW, y, (y >> 1) * ow + (evenW >> 1), level, values);
    if (evenH < h)
      for (let x = 0; x < evenW; x += 2)
        this.block(pixels, w, h, x, evenH, (evenH >> 1) * ow + (x >> 1), level, values);
  }

  /** One overview pixel from the up to 2 x 2 valid pixels at (x, y). */
  private block(
    pixels: Float32Array,
    w: number,
    h: number,
    x: number,
    y: number,
    o: number,
    level: LevelSums,
    values: Float32Array,
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
    this.store(level, values, o, sum, count);
  }

  /** Sums each 2 x 2 block of the finer level's sums and counts (fewer at an odd edge), then takes the means. */
  private fromLevel(finer: LevelSums, level: LevelSums, w: number, h: number, values: Float32Array): void {
    const [inSums, inCounts] = [finer.sums, finer.counts];
    const ow = half(w);
    const evenW = w - (w % 2);
    for (let y = 0; y < h; y += 2) {
      const top = y * w;
      // Past the last row of an odd height, the block's bottom row is its top row counted once.
      const bottom = y + 1 < h ? top + w : -1;
      let o = (y >> 1) * ow;
      for (let x = 0; x < evenW; x += 2, o++) {
        let sum = (inSums[top + x] as number) + (inSums[top + x + 1] as number);
        let count = (inCounts[top + x] as number) + (inCounts[top + x + 1] as number);
        if (bottom >= 0) {
          sum += (inSums[bottom + x] as number) + (inSums[bottom + x + 1] as number);
          count += (inCounts[bottom + x] as number) + (inCounts[bottom + x + 1] as number);
        }
        this.store(level, values, o, sum, count);
      }
      if (evenW < w) {
        const [sum, count] = [inSums[top + evenW] as number, inCounts[top + evenW] as number];
        if (bottom >= 0)
          this.store(
            level,
            values,
            o,
            sum + (inSums[bottom + evenW] as number),
            count + (inCounts[bottom + evenW] as number),
          );
        else this.store(level, values, o, sum, count);
      }
    }
  }

  private store(level: LevelSums, values: Float32Array, o: number, sum: number, count: number): void {
    level.sums[o] = sum;
    level.counts[o] = count;
    values[o] = count > 0 ? sum / count : this.noData;
  }
}
