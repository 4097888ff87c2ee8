/**
 * Free space on the disks Steward writes to, and the failures of a full one. A disk is named by
 * its mount point, which an operator can act on; the path being written often has no meaning to
 * them (a hidden work file) or is not known at all (a write to an open file).
 */
import { stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';

import { InsufficientStorage } from '../errors.js';

export interface DiskSpace {
  /** The mount point of the file system holding the path. */
  mount: string;
  /** Bytes an unprivileged process may still write there. */
  free: number;
  /** Bytes of the file system; 0 for one that holds no files of its own (/proc). */
  size: number;
}

/** The path itself, or its nearest parent that exists (an output not written yet). */
async function existing(path: string): Promise<{ path: string; device: number }> {
  for (let current = path; ; current = dirname(current)) {
    const info = await stat(current).catch(() => undefined);
    if (info) return { path: current, device: info.dev };
    if (dirname(current) === current) throw new Error(`no part of ${path} exists`);
  }
}

/** The topmost folder above `path` on the same device: the mount point. */
async function mountOf(path: string, device: number): Promise<string> {
  let mount = path;
  for (let parent = dirname(mount); parent !== mount; parent = dirname(mount)) {
    if ((await stat(parent)).dev !== device) break;
    mount = parent;
  }
  return mount;
}

export async function diskSpace(path: string): Promise<DiskSpace> {
  const found = await existing(path);
  const info = await statfs(found.path);
  const size = info.blocks * info.bsize;
  return { mount: await mountOf(found.path, found.device), free: info.bavail * info.bsize, size };
}

/** The codes of a write refused for want of space: the kernel's (disk, quota) and SQLite's. */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && FULL_CODES.has(code);
}

/** `1.5 GiB`: sizes in the messages an operator reads. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The 507 of a write refused for want of space on `disk` (a phrase: "the disk mounted at /srv"). */
export function fullDiskError(error: unknown, disk: string): InsufficientStorage {
  return new InsufficientStorage(`${disk} is full: ${(error as Error).message}`, {
    clientMessage: `insufficient storage: ${disk} is full`,
    cause: error,
  });
}

/** The path a failed system call names, if it names one. */
export function failedPath(error: unknown): string | undefined {
  const path = (error as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : undefined;
}

/**
 * The 507 of a full disk, naming the mount holding the path of the failed call, or else `path`.
 * The disk is looked up after the failure; when even that fails, the path itself is named.
 */
export async function insufficientStorage(error: unknown, path?: string): Promise<InsufficientStorage> {
  const target = failedPath(error) ?? path;
  const disk = target === undefined ? undefined : await diskSpace(target).catch(() => undefined);
  const named = disk ? `the disk mounted at ${disk.mount}` : target === undefined ? 'a disk' : `the disk of ${target}`;
  return fullDiskError(error, named);
}

/** Runs `work`, turning a full disk's failure into the 507 naming the disk holding `path`. */
export async function onFullDisk<T>(path: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isDiskFull(error)) throw await insufficientStorage(error, path);
    throw error;
  }
}

/**
 * Refuses with 507 when `bytes` more would leave less than `reserve` free on the disk holding
 * `path`.
 */
export async function checkRoomFor(path: string, bytes: number, reserve: number, what: string): Promise<void> {
  const { mount, free, size } = await diskSpace(path);
  // A file system without a size of its own (/proc) refuses the write itself.
  if (size === 0 || free - bytes >= reserve) return;
  const needs = `${what} needs about ${formatBytes(bytes)}`;
  const kept = reserve > 0 ? ` and ${formatBytes(reserve)} kept free (STEWARD_MIN_FREE_SPACE)` : '';
  throw new InsufficientStorage(
    `insufficient storage: ${needs}${kept}; the disk mounted at ${mount} has ${formatBytes(free)} free`,
  );
}

/**
 * Below this many free bytes after a failed write, the disk is taken as the reason: a worker
 * process reports GDAL's message, not the system's error code, and GDAL words it differently
 * for each format and call.
 */
const NEARLY_FULL_BYTES = 16 * 1024 * 1024;

/**
 * `error` as the 507 naming the disk of `folder` when that disk is (nearly) full, otherwise as
 * it is. Call before removing what the failed run wrote, which would free the disk again.
 */
export async function whenDiskFull(error: unknown, folder: string): Promise<unknown> {
  if (isDiskFull(error)) return insufficientStorage(error, folder);
  const disk = await diskSpace(folder).catch(() => undefined);
  if (disk === undefined || disk.size === 0 || disk.free >= NEARLY_FULL_BYTES) return error;
  return insufficientStorage(error, folder);
}
