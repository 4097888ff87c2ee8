/**
 * Where a computed raster is written while it is being computed, and how it is moved into place,
 * so that a failed run leaves nothing at the requested path: a local GeoTIFF is written under a
 * hidden temporary name in the same folder and renamed over the target when complete; an object
 * storage target is written to a local temporary file and uploaded when complete.
 */
import { constants } from 'node:fs';
import { access, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';

import gdal from 'gdal-async';

import { BadRequest, Conflict, Unprocessable } from '../errors.js';
import { moveIntoPlace } from '../storage/move-into-place.js';
import { MAX_OWNED_TARGET_BYTES, ownedSibling } from '../storage/owned-files.js';
import { type TaskRun } from './gdal-child.js';
import { isObjectStoragePath, parseObjectPath, uploadGeoTiff } from './object-storage.js';

export interface OutputTarget {
  /** The local file the raster is written to. */
  workPath: string;
  /** The folder of the work file, whose disk must have room for it. */
  workFolder: string;
  /** Moves the finished file to the requested path; `run` stops an upload and follows it. */
  publish(run?: TaskRun): Promise<void>;
  /** Removes the work file; the requested path is left as it was. */
  discard(): Promise<void>;
}

function checkName(path: string): void {
  if (!/\.tiff?$/i.test(path)) throw new BadRequest(`Output ${path} must name a GeoTIFF file ending in .tif or .tiff.`);
}

export interface OutputOptions {
  /** Whether an existing file (or object) at the path may be replaced; refused with 409 otherwise. */
  overwrite?: boolean;
}

function refuseExisting(path: string): never {
  throw new Conflict(`Output ${path} exists already; send "overwrite": true to replace it.`, { code: 'output_exists' });
}

async function checkFolder(folder: string, path: string, options: OutputOptions): Promise<void> {
  const info = await stat(folder).catch(() => undefined);
  if (!info?.isDirectory())
    throw new Unprocessable(`Output ${path} cannot be written: folder ${folder} does not exist.`);
  await access(folder, constants.W_OK).catch(() => {
    throw new Unprocessable(`Output ${path} cannot be written: folder ${folder} is not writable.`);
  });
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) throw new Unprocessable(`Output ${path} cannot be written: it is a folder.`);
  if (existing && !options.overwrite) refuseExisting(path);
}

/** Files GDAL keeps beside a raster; those of a replaced raster describe the old pixels. */
const SIDECARS = ['.aux.xml', '.ovr'];

async function moveIfPresent(from: string, to: string): Promise<void> {
  await rename(from, to).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}

/**
 * File names have at most 255 bytes, and the work file and the replaced raster beside the output
 * add to its name (GDAL writes an `.aux.xml` beside the work file, and the output, too).
 */
const MAX_OUTPUT_NAME_BYTES = MAX_OWNED_TARGET_BYTES;

async function localTarget(path: string, options: OutputOptions): Promise<OutputTarget> {
  if (Buffer.byteLength(basename(path)) > MAX_OUTPUT_NAME_BYTES) {
    throw new BadRequest(`Output ${path} has a file name longer than ${MAX_OUTPUT_NAME_BYTES} bytes.`);
  }
  await checkFolder(dirname(path), path, options);
  // Named after this process, which the project's lock does not cover: clearing leftovers removes
  // it from a project's data folder only once this process is gone.
  const workPath = ownedSibling(path, 'work');
  return {
    workPath,
    workFolder: dirname(path),
    publish: async () => {
      // Not renamed over the old raster, which made ext4 write the new one out first (see moveIntoPlace).
      await moveIntoPlace(workPath, path);
      for (const suffix of SIDECARS) await rm(`${path}${suffix}`, { force: true });
      // GDAL writes a .aux.xml only for what GeoTIFF tags cannot hold, such as some CRSs.
      await moveIfPresent(`${workPath}.aux.xml`, `${path}.aux.xml`);
    },
    discard: async () => {
      for (const file of [workPath, `${workPath}.aux.xml`]) await rm(file, { force: true });
    },
  };
}

async function objectStorageTarget(path: string, options: OutputOptions): Promise<OutputTarget> {
  const object = parseObjectPath(path);
  if (!object) throw new BadRequest(`Output ${path} must read /vsis3/<bucket>/<key>.`);
  if (
    !options.overwrite &&
    (await gdal.fs.statAsync(path).then(
      () => true,
      () => false,
    ))
  )
    refuseExisting(path);
  const folder = await mkdtemp(join(tmpdir(), 'steward-output-'));
  // Not the key's own name, which may be longer than a local file name can be.
  const workPath = join(folder, 'output.tif');
  const discard = () => rm(folder, { recursive: true, force: true });
  return {
    workPath,
    workFolder: folder,
    publish: async (run) => {
      try {
        await uploadGeoTiff(workPath, path, { signal: run?.signal });
      } catch (error) {
        if (run?.signal?.aborted) throw error;
        throw new Unprocessable(`Output ${path} cannot be written to object storage: ${(error as Error).message}`);
      } finally {
        await discard();
      }
    },
    discard,
  };
}

/** Checks that `path` can receive a GeoTIFF and prepares its work file. */
export async function prepareOutputTarget(path: string, options: OutputOptions = {}): Promise<OutputTarget> {
  checkName(path);
  if (isObjectStoragePath(path)) return objectStorageTarget(path, options);
  if (path.startsWith('/vsi') || !isAbsolute(path)) {
    throw new BadRequest(`Output ${path} must be an absolute file path or /vsis3/<bucket>/<key>.`);
  }
  return localTarget(path, options);
}
