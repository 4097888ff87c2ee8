/**
 * Process-wide GDAL settings that keep raster processing's memory flat. GDAL's block cache
 * defaults to 5% of RAM and fills with blocks that a streaming pass never reads again; 32 MB holds
 * every block one window of the calculator or histogram touches. Uncompressed GeoTIFFs are read
 * straight into the caller's buffer instead of through that cache. Must run before the first
 * raster is read: GDAL reads GDAL_CACHEMAX once. A value already set (in the environment, which
 * GDAL reads itself) wins.
 */
import gdal from 'gdal-async';

export const BLOCK_CACHE_MB = 32;
/**
 * The calculator's worker process: its windows span rows of the output's 256-pixel tiles, so the
 * cache holds the row of tiles being written (8 MB at 8000 pixels wide), the overviews' partial
 * tiles, and the row before, written to the file when evicted, complete. Inputs bypass it (direct
 * I/O). A wider raster's tiles are evicted before they are complete and read back: slower, in
 * the same memory.
 */
export const CALCULATOR_CACHE_MB = 16;

export function configureGdalMemory(cacheMb = BLOCK_CACHE_MB): void {
  if (!gdal.config.get('GDAL_CACHEMAX')) gdal.config.set('GDAL_CACHEMAX', String(cacheMb));
  if (!gdal.config.get('GTIFF_DIRECT_IO')) gdal.config.set('GTIFF_DIRECT_IO', 'YES');
}
