/** Paths on S3-compatible object storage as GDAL names them: `/vsis3/<bucket>/<key>`. */
import gdal from 'gdal-async';

import { runGdalTask, type TaskRun } from './gdal-child.js';

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
 * upload: the object appears only once the upload is complete. gdal-async offers this copy only
 * synchronously, so it runs in a process of its own (`copyToObjectStorage` there): a cancel kills
 * that process, and an upload it did not complete leaves no object.
 */
export async function uploadGeoTiff(localPath: string, target: string, run: TaskRun = {}): Promise<void> {
  await runGdalTask({ kind: 'upload', localPath, target }, run);
}

/**
 * The copy itself, through GDAL rather than an S3 client so that GDAL's own view of the bucket
 * is the one written to. It holds the thread for the length of the upload: only the worker
 * process of `gdal-child.ts` calls it.
 */
export function copyToObjectStorage(localPath: string, target: string): void {
  gdal.drivers.get('GTiff').copyFiles(target, localPath);
}
