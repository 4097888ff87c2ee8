/** Cutting a raster into windows that follow its blocks, so each read touches whole blocks once. */

export interface Window {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface BlockSize {
  x: number;
  y: number;
}

/**
 * Windows of at most about `maxPixels` pixels (never less than one block), row by row: whole
 * rows of blocks when a row of blocks fits, otherwise runs of whole blocks.
 */
export function planWindows(width: number, height: number, block: BlockSize, maxPixels: number): Window[] {
  const blockX = Math.max(1, Math.min(block.x, width));
  const blockY = Math.max(1, Math.min(block.y, height));
  const columns = width * blockY <= maxPixels ? width : Math.max(1, Math.floor(maxPixels / blockY / blockX)) * blockX;
  const rows = Math.max(1, Math.floor(maxPixels / columns / blockY)) * blockY;
  const windows: Window[] = [];
  for (let y = 0; y < height; y += rows) {
    for (let x = 0; x < width; x += columns) {
      windows.push({ x, y, width: Math.min(columns, width - x), height: Math.min(rows, height - y) });
    }
  }
  return windows;
}
