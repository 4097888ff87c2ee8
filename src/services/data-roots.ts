import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';

import { Forbidden } from '../errors.js';

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

/**
 * Confines filesystem datasources and outputs to configured folders. Paths are compared after
 * resolving symbolic links and `..`, so neither leads outside. Object storage (`/vsis3/`) is not
 * on the filesystem and stays allowed; other GDAL virtual paths could reach anywhere and are refused.
 */
export class DataRoots {
  private constructor(private readonly roots: string[] | undefined) {}

  /** The folders (their real paths), or undefined when any path is allowed. */
  get folders(): readonly string[] | undefined {
    return this.roots;
  }

  static async create(roots: string[] | undefined): Promise<DataRoots> {
    return new DataRoots(roots && (await Promise.all(roots.map(realPathOf))));
  }

  async check(path: string): Promise<void> {
    if (!this.roots || path.startsWith('/vsis3/')) return;
    if (path.startsWith('/vsi'))
      throw new Forbidden(`${path.split('/')[1]} paths are not allowed when STEWARD_DATA_ROOTS is set`);
    const real = await realPathOf(path);
    if (!this.roots.some((root) => inside(root, real))) {
      throw new Forbidden(`${path} is outside the data folders this server may use`);
    }
  }
}
