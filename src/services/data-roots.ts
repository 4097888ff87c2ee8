import { open, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';

import gdal from 'gdal-async';

import { Forbidden } from '../errors.js';
import { fileVersion, folderVersion } from '../storage/file-version.js';
import { LruCache } from './project-cache.js';

function inside(root: string, path: string): boolean {
  const rest = relative(root, path);
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest) && !rest.startsWith(sep));
}

/** The real path of `path`, or of its nearest existing parent joined with the rest (for outputs). */
async function realPathOf(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realPathOf(parent), basename(path));
  }
}

/** A driver prefix GDAL opens through (`CSV:`, `GPKG:`, `NETCDF:`, `PG:`): a dataset naming another. */
const DRIVER_PREFIX = /^[A-Za-z][A-Za-z0-9_]+:/;
/** XML documents that make GDAL read other datasets, files or URLs: their root elements. */
const INDIRECT_ROOTS =
  /^(?:\uFEFF)?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*<(VRTDataset|OGRVRTDataSource|GDAL_WMS|GDAL_WMTS|GDALTileIndexDataset)\b/;
/** Drivers whose datasets name other datasets, files or services. */
const INDIRECT_DRIVERS = new Set(['VRT', 'OGR_VRT', 'GTI', 'STACIT', 'STACTA', 'WMS', 'WMTS', 'GPSBabel']);
/** Bytes of a file read to recognise an indirection document. */
const SNIFF_BYTES = 4096;
/** Verdicts remembered: a map drawn through the API re-checks its layers' files at the cost of a stat. */
const REMEMBERED_VERDICTS = 2048;

async function head(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead).toString('latin1');
  } finally {
    await handle.close();
  }
}

interface Verdict {
  version: string;
  bytes: 1;
}

/**
 * Confines filesystem datasources and outputs to configured folders. Paths are compared after
 * resolving symbolic links and `..`, so neither leads outside. Object storage (`/vsis3/`) is not
 * on the filesystem and stays allowed; other GDAL virtual paths could reach anywhere and are refused.
 * Datasets are confined by content: every file GDAL lists for them (sidecars, sources) lies inside,
 * and formats that name other datasets (VRT, driver prefixes) are refused unless allowed.
 */
export class DataRoots {
  private readonly verdicts = new LruCache<Verdict>(REMEMBERED_VERDICTS);

  private constructor(
    private readonly roots: string[] | undefined,
    private readonly allowIndirect: boolean,
  ) {}

  /** The folders (their real paths), or undefined when any path is allowed. */
  get folders(): readonly string[] | undefined {
    return this.roots;
  }

  static async create(roots: string[] | undefined, allowIndirect = false): Promise<DataRoots> {
    return new DataRoots(roots && (await Promise.all(roots.map(realPathOf))), allowIndirect);
  }

  async check(path: string): Promise<void> {
    if (!this.roots || path.startsWith('/vsis3/')) return;
    if (path.startsWith('/vsi'))
      throw new Forbidden(`${path.split('/')[1]} paths are not allowed when STEWARD_DATA_ROOTS is set`, {
        code: 'outside_data_roots',
      });
    if (!(await this.isInside(path))) {
      throw new Forbidden(`${path} is outside the data folders this server may use`, { code: 'outside_data_roots' });
    }
  }

  /** Whether `path` (its real path) lies inside a root or one of `others`; always true without roots. */
  async isInside(path: string, others: readonly string[] = []): Promise<boolean> {
    if (this.roots === undefined) return true;
    const real = await realPathOf(path);
    const folders = [...this.roots, ...(await Promise.all(others.map(realPathOf)))];
    return folders.some((root) => inside(root, real));
  }

  /**
   * Checks a dataset GDAL is to open by what it makes GDAL read: with data roots, every file GDAL
   * lists for it lies inside them, and a missing file and one outside get the same answer, so that
   * the answer tells nothing of files outside. Formats naming other datasets are refused unless
   * allowed: always for a new layer (`strict`), with data roots for a stored one.
   */
  async checkDataset(gdalPath: string, strict = false): Promise<void> {
    const confined = this.roots !== undefined;
    if (gdalPath.startsWith('/vsis3/') || (!confined && !strict)) return;
    if (isDriverPrefixed(gdalPath)) {
      if (!this.allowIndirect) throw indirect(gdalPath);
      if (confined) await this.checkFileList(gdalPath, confined);
      return;
    }
    if (gdalPath.startsWith('/vsi')) return this.check(gdalPath);
    const real = await realPathOf(gdalPath);
    if (!(await this.isInside(real))) throw unreadable(gdalPath);
    const file = fileVersion(real);
    const version = file ?? folderVersion(real);
    if (version === undefined) {
      if (confined) throw unreadable(gdalPath);
      return; // without roots, the probe that follows says it is missing
    }
    if (this.verdicts.get(gdalPath)?.version === version) return;
    if (!this.allowIndirect && file !== undefined && INDIRECT_ROOTS.test(await head(real))) throw indirect(gdalPath);
    await this.checkFileList(gdalPath, confined);
    this.verdicts.set(gdalPath, { version, bytes: 1 });
  }

  /** The dataset's driver names no other dataset, and with roots every file GDAL reads it from lies inside them. */
  private async checkFileList(gdalPath: string, confined: boolean): Promise<void> {
    let dataset: gdal.Dataset;
    try {
      dataset = await gdal.openAsync(gdalPath);
    } catch {
      // Not a dataset GDAL opens: the probe that follows says why.
      return;
    }
    try {
      if (!this.allowIndirect && INDIRECT_DRIVERS.has(dataset.driver.description)) throw indirect(gdalPath);
      if (!confined) return;
      for (const file of dataset.getFileList()) {
        if (file.startsWith('/vsi') || !(await this.isInside(file))) throw unreadable(gdalPath);
      }
    } finally {
      dataset.close();
    }
  }
}

/** A dataset named through a driver prefix (`CSV:`, `GPKG:`, `NETCDF:`), which GDAL reads another dataset through. */
export function isDriverPrefixed(path: string): boolean {
  return DRIVER_PREFIX.test(path);
}

function unreadable(path: string): Forbidden {
  return new Forbidden(`${path} is not a dataset inside the data folders this server may use`, {
    code: 'outside_data_roots',
  });
}

function indirect(path: string): Forbidden {
  return new Forbidden(
    `${path} makes GDAL read other datasets (a VRT or a driver prefix such as CSV:), which is refused ` +
      'unless STEWARD_ALLOW_INDIRECT_DATASOURCES=1',
  );
}
