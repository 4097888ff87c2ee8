/**
 * The read-only datasource browser: the folders of STEWARD_DATA_ROOTS, object storage through
 * GDAL's `/vsis3/`, and the tables of a PostgreSQL connection service, each with the layers GDAL
 * can open, so that a layer can be added without typing its datasource. Paths are confined by the
 * same DataRoots check as layer creation.
 */
import { type Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize } from 'node:path';

import gdal from 'gdal-async';

import { BadRequest, NotFound, Unprocessable } from '../errors.js';
import { type CatalogLayer, datasetLayers, isSidecar, postgresLayers } from '../gdal/catalog.js';
import { type CrsResolver } from '../gdal/crs.js';
import { isObjectStoragePath } from '../gdal/object-storage.js';
import { type DataRoots } from './data-roots.js';

/** Files opened with GDAL in one listing at most; the rest are listed by name only. */
export const MAX_PROBED_FILES = 200;
const VSI_DIRECTORY = 0o040000;

export interface FolderEntry {
  name: string;
  path: string;
}

export interface DatasetEntry extends FolderEntry {
  /** What GDAL found in the file; empty for a file GDAL cannot open or that was not probed. */
  layers: CatalogLayer[];
}

export interface FolderListing {
  path: string;
  /** The folder above, when it is still inside the data folders (or the bucket). */
  parent?: string;
  folders: FolderEntry[];
  datasets: DatasetEntry[];
  /** True when the folder had more than MAX_PROBED_FILES files: the rest were not opened. */
  truncated: boolean;
}

interface RawEntry {
  name: string;
  folder: boolean;
}

export class DatasourceBrowser {
  constructor(
    private readonly dataRoots: DataRoots,
    private readonly crs: CrsResolver,
  ) {}

  /** Lists a folder of the data roots or a `/vsis3/` prefix. */
  async folder(path: string): Promise<FolderListing> {
    const objectStorage = isObjectStoragePath(path) || path === '/vsis3';
    if (!objectStorage && !isAbsolute(path)) throw new BadRequest(`path "${path}" must be absolute or /vsis3/...`);
    if (objectStorage && /(^|\/)\.\.?(\/|$)/.test(path)) throw new BadRequest(`path "${path}" has a . or .. segment`);
    if (!objectStorage && this.dataRoots.folders === undefined) {
      throw new NotFound('browsing folders needs STEWARD_DATA_ROOTS: set it to the folders datasources may come from', {
        code: 'feature_disabled',
      });
    }
    const folder = objectStorage ? path.replace(/\/+$/, '') : normalize(path);
    await this.dataRoots.check(objectStorage ? `${folder}/` : folder);
    const entries = objectStorage ? await this.objectEntries(folder) : await this.fileEntries(folder);
    const files = entries.filter((entry) => !entry.folder && !isSidecar(entry.name));
    const probed = files.slice(0, MAX_PROBED_FILES);
    const datasets = await Promise.all(
      files.map(async ({ name }, index) => {
        const entryPath = `${folder}/${name}`;
        const layers = index < probed.length ? await datasetLayers(entryPath, this.crs) : [];
        return { name, path: entryPath, layers };
      }),
    );
    const parent = await this.parentOf(folder, objectStorage);
    return {
      path: folder,
      ...(parent !== undefined && { parent }),
      folders: entries.filter((entry) => entry.folder).map(({ name }) => ({ name, path: `${folder}/${name}` })),
      datasets: datasets.filter((dataset) => dataset.layers.length > 0 || files.length > MAX_PROBED_FILES),
      truncated: files.length > MAX_PROBED_FILES,
    };
  }

  /** The vector tables of a PostgreSQL connection service. */
  async postgres(service: string): Promise<CatalogLayer[]> {
    try {
      return await postgresLayers(service, this.crs);
    } catch (error) {
      throw new Unprocessable(`the tables of service "${service}" cannot be listed: ${(error as Error).message}`);
    }
  }

  /** Visible entries of a local folder; sub-folders only when they stay inside the roots. */
  private async fileEntries(folder: string): Promise<RawEntry[]> {
    let dirents: Dirent[];
    try {
      dirents = await readdir(folder, { withFileTypes: true });
    } catch (error) {
      throw new NotFound(`folder ${folder} cannot be read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const entries = await Promise.all(
      dirents
        .filter((dirent) => !dirent.name.startsWith('.'))
        .map(async (dirent): Promise<RawEntry | undefined> => {
          const path = join(folder, dirent.name);
          try {
            await this.dataRoots.check(path);
            return { name: dirent.name, folder: (await stat(path)).isDirectory() };
          } catch {
            return undefined; // a link leading outside the roots, or gone meanwhile
          }
        }),
    );
    return sortEntries(entries.filter((entry) => entry !== undefined));
  }

  private async objectEntries(prefix: string): Promise<RawEntry[]> {
    let names: string[];
    try {
      names = await gdal.fs.readDirAsync(`${prefix}/`);
    } catch (error) {
      // GDAL may give no message (a bucket it cannot reach): the client still gets a reason.
      const reason =
        (error as Error).message || 'object storage did not answer; check the bucket name and the AWS_* settings';
      throw new NotFound(`${prefix} cannot be listed: ${reason}`);
    }
    const entries = await Promise.all(
      names
        .filter((name) => name !== '' && !name.startsWith('.'))
        .map(async (name) => {
          const mode = await gdal.fs.statAsync(`${prefix}/${name}`).then(
            (info) => info.mode,
            () => 0,
          );
          // A bucket or a common prefix: GDAL reports it as a folder.
          return { name, folder: (mode & VSI_DIRECTORY) === VSI_DIRECTORY || prefix === '/vsis3' };
        }),
    );
    return sortEntries(entries);
  }

  private async parentOf(folder: string, objectStorage: boolean): Promise<string | undefined> {
    if (objectStorage) return folder === '/vsis3' ? undefined : dirname(folder);
    const parent = dirname(folder);
    if (parent === folder) return undefined;
    try {
      await this.dataRoots.check(parent);
      return parent;
    } catch {
      return undefined;
    }
  }
}

function sortEntries(entries: RawEntry[]): RawEntry[] {
  return entries.sort((a, b) => a.name.localeCompare(b.name));
}
