/** Comparing QGIS Server's drawings with PyQGIS's, as the style tests judge them. */
import { type Image, pixelsDifferingBeyond } from './png.js';

/** QGIS Server draws at 0.28 mm a pixel (OGC's standard rendering pixel), 90.714 DPI. */
export const SERVER_DPI = 25.4 / 0.28;
/**
 * Two drawings agree when at most this share of their painted pixels differ by more than
 * CHANNEL_TOLERANCE in a channel: room for an anti-aliased edge or a glyph landing a pixel apart.
 * (QGIS 3.22's server and PyQGIS have drawn the corpus identically.)
 */
const PIXEL_SHARE_TOLERANCE = 0.005;
const CHANNEL_TOLERANCE = 24;

/** Whether two drawings agree within the stated tolerance, and how many pixels differ. */
export function agree(a: Image, b: Image): { ok: boolean; differing: number } {
  const differing = pixelsDifferingBeyond(a, b, CHANNEL_TOLERANCE);
  const painted = Math.max(a.paintedPixels(), b.paintedPixels());
  return { ok: differing <= PIXEL_SHARE_TOLERANCE * painted, differing };
}

/** The opaque colours of a drawing, as `r,g,b`. */
export function distinctColours(image: Image): Set<string> {
  const colours = new Set<string>();
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const p = image.pixel(x, y);
      if (p[3] === 255) colours.add(p.slice(0, 3).join(','));
    }
  }
  return colours;
}
