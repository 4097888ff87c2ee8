import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';

import gdal from 'gdal-async';

export interface Image {
  width: number;
  height: number;
  /** [r, g, b, a] at column x, row y. */
  pixel(x: number, y: number): [number, number, number, number];
  /** How many pixels have an alpha above zero. */
  paintedPixels(): number;
}

/** Decodes a PNG with GDAL, so tests look at the pixels QGIS Server drew. */
export function decodePng(bytes: Buffer): Image {
  const path = `/vsimem/${randomUUID()}.png`;
  gdal.vsimem.set(bytes, path);
  try {
    const dataset = gdal.open(path);
    const { x: width, y: height } = dataset.rasterSize;
    const count = dataset.bands.count();
    const bands = Array.from({ length: count }, (_, index) =>
      dataset.bands.get(index + 1).pixels.read<Uint8Array>(0, 0, width, height),
    );
    dataset.close();
    const channel = (band: number, offset: number): number => (band < count ? (bands[band]?.[offset] ?? 0) : 255);
    return {
      width,
      height,
      pixel(x, y) {
        const offset = y * width + x;
        return [channel(0, offset), channel(1, offset), channel(2, offset), channel(3, offset)];
      },
      paintedPixels() {
        const alpha = count >= 4 ? bands[3] : undefined;
        if (!alpha) return width * height;
        return alpha.reduce((sum, value) => sum + (value > 0 ? 1 : 0), 0);
      },
    };
  } finally {
    gdal.vsimem.release(path);
  }
}

/** How many pixels differ between two images of the same size. */
export function differingPixels(a: Image, b: Image): number {
  assert.deepEqual([a.width, a.height], [b.width, b.height], 'the images have the same size');
  let differing = 0;
  for (let y = 0; y < a.height; y += 1) {
    for (let x = 0; x < a.width; x += 1) if (a.pixel(x, y).join() !== b.pixel(x, y).join()) differing += 1;
  }
  return differing;
}

/**
 * How many pixels of two drawings of the same size differ by more than `tolerance` in a channel;
 * pixels transparent in both agree whatever colour they hold.
 */
export function pixelsDifferingBeyond(a: Image, b: Image, tolerance: number): number {
  assert.deepEqual([a.width, a.height], [b.width, b.height], 'the images have the same size');
  let count = 0;
  for (let y = 0; y < a.height; y++) {
    for (let x = 0; x < a.width; x++) {
      const p = a.pixel(x, y);
      const q = b.pixel(x, y);
      if (p[3] === 0 && q[3] === 0) continue;
      if (p.some((value, channel) => Math.abs(value - (q[channel] ?? 0)) > tolerance)) count++;
    }
  }
  return count;
}

/** How many pixels of a drawing are opaque and exactly of this colour (r, g, b). */
export function pixelsOf(image: Image, [r, g, b]: readonly number[]): number {
  let count = 0;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const p = image.pixel(x, y);
      if (p[0] === r && p[1] === g && p[2] === b && p[3] === 255) count++;
    }
  }
  return count;
}
