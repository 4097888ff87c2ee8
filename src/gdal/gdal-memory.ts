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
 * The calculator's worker process: its windows are 256 rows of whole 256-pixel tiles, so each
 * input tile is decoded once with a cache this small, and the tiles it writes are flushed after
 * every window.
 */
export const CALCULATOR_CACHE_MB = 4;

export function configureGdalMemory(cacheMb = BLOCK_CACHE_MB): void {
  if (!gdal.config.get('GDAL_CACHEMAX')) gdal.config.set('GDAL_CACHEMAX', String(cacheMb));
  if (!gdal.config.get('GTIFF_DIRECT_IO')) gdal.config.set('GTIFF_DIRECT_IO', 'YES');
}
