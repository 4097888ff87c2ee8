/**
 * Data files in the upload root (STEWARD_UPLOAD_ROOT) over HTTP: a file uploaded lands whole or
 * not at all, once GDAL opens it; folders are listed and files given back; a file a layer reads
 * is not removed (docs/publishing.md).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';

import { BadRequest, Conflict, NotFound, Unprocessable } from '../errors.js';
import { datasetFiles } from '../gdal/dataset-files.js';
import { insufficientStorage, isDiskFull } from '../storage/disk-space.js';
import { removeMadeFolders } from '../storage/made-folders.js';
import { limitedChunks, receiveFile } from '../storage/received-file.js';
import { type LayerService } from './layers.js';
import { checkName } from './names.js';
import { DEFAULT_SCHEMA } from './projects.js';
import { type ProjectRepository } from './repository.js';
import { type HandedOverBody, receiveFileOnThread } from './threaded-receipt.js';

export interface DataEntry {
  name: string;
  type: 'file' | 'folder';
  /** Bytes, for a file. */
  size?: number;
}

export type DataRead = { kind: 'folder'; entries: DataEntry[] } | { kind: 'file'; path: string; name: string };

export class DataFiles {
  constructor(
    private readonly root: string | undefined,
    private readonly repository: ProjectRepository,
    private readonly layers: LayerService,
    /** Bytes an upload may have. */
    private readonly bodyLimit: number,
  ) {}

  /** The absolute path of `relative` (segments by `/`) in the upload root; each segment a valid name. */
  pathOf(relative: string): string {
    if (this.root === undefined)
      throw new NotFound('this server takes no data files (STEWARD_UPLOAD_ROOT is not set)', {
        code: 'feature_disabled',
      });
    const segments = relative.split('/').filter((segment) => segment !== '');
    for (const segment of segments) checkName('data path segment', segment);
    return join(this.root, ...segments);
  }

  /**
   * Stores the upload `body` as the file at `relative`, written beside it as it arrives and renamed
   * into place once whole; PayloadTooLarge past the body limit, Unprocessable when GDAL cannot open
   * it, leaving nothing either way: not the folders made for it either. A body left on its socket
   * is read on the thread that receives uploads; GDAL's check runs here once it is whole.
   */
  async put(relative: string, body: Readable | HandedOverBody): Promise<{ created: boolean; path: string }> {
    const path = this.pathOf(relative);
    if (path === this.root) throw new BadRequest("give the file's path in the upload root");
    const existing = await stat(path).catch(() => undefined);
    if (existing?.isDirectory()) throw new Conflict(`${relative} is a folder`);
    const folder = dirname(path);
    // A hidden folder of its own, made in the same call as the folders above it (a recursive mkdir
    // makes again a parent that goes meanwhile): another upload's refusal, removing the empty
    // folders it made, cannot take them from under this one. The file keeps its name there, and so
    // its extension, which GDAL recognises some formats by.
    const staging = join(folder, `.upload.${randomUUID()}.tmp`);
    const temporary = join(staging, basename(path));
    let made: string | undefined;
    try {
      made = await mkdir(staging, { recursive: true });
      await (body instanceof Readable
        ? receiveFile(limitedChunks(body, this.bodyLimit), temporary)
        : receiveFileOnThread(body, temporary));
      if (!(await datasetFiles(temporary)))
        throw new Unprocessable(`GDAL cannot open ${relative} as a dataset`, { code: 'datasource_unreadable' });
      await rename(temporary, path);
      await rm(staging, { recursive: true, force: true });
      return { created: existing === undefined, path };
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      const answer = isDiskFull(error) ? await insufficientStorage(error, folder) : error;
      await removeMadeFolders(folder, made);
      throw answer;
    }
  }

  /** A folder's entries, or the file to send. */
  async read(relative: string): Promise<DataRead> {
    const path = this.pathOf(relative);
    const info = await stat(path).catch(() => undefined);
    if (!info) throw new NotFound(`${relative || '/'} is not in the upload root`);
    if (info.isFile()) return { kind: 'file', path, name: path.split('/').pop() ?? 'data' };
    const entries = await readdir(path, { withFileTypes: true });
    const listed = await Promise.all(
      entries
        .filter((entry) => !entry.name.startsWith('.') && (entry.isFile() || entry.isDirectory()))
        .map(async (entry): Promise<DataEntry> => {
          if (entry.isDirectory()) return { name: entry.name, type: 'folder' };
          return { name: entry.name, type: 'file', size: (await stat(join(path, entry.name))).size };
        }),
    );
    return { kind: 'folder', entries: listed.sort((a, b) => a.name.localeCompare(b.name)) };
  }

  /** Removes a file, or an empty folder; Conflict naming the projects and layers that read the file. */
  async remove(relative: string): Promise<void> {
    const path = this.pathOf(relative);
    const info = await stat(path).catch(() => undefined);
    if (!info || path === this.root) throw new NotFound(`${relative || '/'} is not in the upload root`);
    if (info.isDirectory()) {
      if ((await readdir(path)).length > 0) throw new Conflict(`folder ${relative} is not empty`);
      await rm(path, { recursive: true });
      return;
    }
    const users = await this.layersReading(path);
    if (users.length > 0)
      throw new Conflict(`${relative} is read by ${users.join(', ')}: remove those layers first`, {
        code: 'file_in_use',
      });
    await rm(path);
  }

  /** `project "p" layer "l"` for each layer of the default schema's projects that reads `path`. */
  private async layersReading(path: string): Promise<string[]> {
    const users: string[] = [];
    for (const name of await this.repository.store.list(DEFAULT_SCHEMA)) {
      const sources = await this.layers.sources({ name, schema: DEFAULT_SCHEMA }).catch(() => []);
      for (const source of sources) {
        if (source.source === path) users.push(`project "${name}" layer "${source.name}"`);
      }
    }
    return users;
  }
}
