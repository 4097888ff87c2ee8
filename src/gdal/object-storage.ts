/** Paths on S3-compatible object storage as GDAL names them: `/vsis3/<bucket>/<key>`. */
import gdal from 'gdal-async';

export interface ObjectPath {
  bucket: string;
  key: string;
}

const PREFIX = '/vsis3/';

export function isObjectStoragePath(path: string): boolean {
  return path.startsWith(PREFIX);
}

/** Bucket and key of a `/vsis3/` path, or undefined when either is missing. */
export function parseObjectPath(path: string): ObjectPath | undefined {
  if (!isObjectStoragePath(path)) return undefined;
  const rest = path.slice(PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return { bucket: rest.slice(0, slash), key: rest.slice(slash + 1) };
}

/**
 * Copies a local GeoTIFF (or .ovr) to a `/vsis3/` path through GDAL, as one streamed multipart
 * upload: the object appears only once the upload is complete. Going through GDAL rather than an
 * S3 client keeps GDAL's cache of bucket listings true in this process (an object put there by
 * another client stays invisible to GDAL until restart once GDAL has listed its folder), so the
 * new object can be opened at once. gdal-async offers this copy only synchronously: it holds the
 * event loop for the length of the upload.
 */
export function uploadGeoTiff(localPath: string, target: string): void {
  gdal.drivers.get('GTiff').copyFiles(target, localPath);
}
