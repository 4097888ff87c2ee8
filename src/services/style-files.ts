import { readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { NotFound } from '../errors.js';
import { type Probed } from '../gdal/probe.js';
import { GEOMETRIES, type Geometry, geometryClass } from '../qgis/geometry.js';
import { InternalDatabase } from '../storage/internal-db.js';
import { type ProjectRef, type ProjectStore } from '../storage/project-store.js';
import { checkName } from './names.js';

/** The style every layer starts with: QGIS's own default symbology, not a QML file. */
export const BUILT_IN_STYLE = 'default';

export { GEOMETRIES, type Geometry };

/** Larger styles (images embedded in their QML) are read on the thread pool. */
const SYNC_READ_BYTES = 256 * 1024;

function listing(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A project's styles as QML files in its data folder, and its default style per geometry. */
export class StyleFiles {
  constructor(private readonly store: ProjectStore) {}

  path(ref: ProjectRef, name: string): string {
    return join(this.store.dataDir(ref), `${checkName('style', name)}.qml`);
  }

  /**
   * The folder of the images a style package brought: `images/<style>/` in the project's data
   * folder, each image named by its SHA-256 so that a replaced package never rewrites a file a
   * stored style still names.
   */
  imagesDir(ref: ProjectRef, name: string): string {
    return join(this.store.dataDir(ref), 'images', checkName('style', name));
  }

  /** The image folders of the project's styles (of styles removed too, until they are pruned). */
  imageFolders(ref: ProjectRef): string[] {
    const root = join(this.store.dataDir(ref), 'images');
    return listing(root).map((entry) => join(root, entry));
  }

  /**
   * A style of up to SYNC_READ_BYTES is read synchronously: its four hand-offs to the thread pool
   * (open, stat, read, close) took longer than reading it: milliseconds of a style write under load.
   */
  async read(ref: ProjectRef, name: string): Promise<string> {
    const path = this.path(ref, name);
    try {
      const size = statSync(path).size;
      return size <= SYNC_READ_BYTES ? readFileSync(path, 'utf8') : await readFile(path, 'utf8');
    } catch {
      throw new NotFound(`project "${ref.name}" has no style "${name}"`);
    }
  }

  /** Read synchronously: a listing of one small folder costs less than the thread-pool hand-off. */
  names(ref: ProjectRef): string[] {
    const entries = listing(this.store.dataDir(ref));
    return entries
      .filter((entry) => entry.endsWith('.qml') && !entry.startsWith('.'))
      .map((entry) => entry.slice(0, -4))
      .sort();
  }

  defaults(ref: ProjectRef): Record<Geometry, string> {
    return InternalDatabase.use(this.store.dataDir(ref), (db) => db.defaultStyles());
  }

  setDefault(ref: ProjectRef, geometry: Geometry, name: string): void {
    InternalDatabase.use(this.store.dataDir(ref), (db) => db.setDefaultStyle(geometry, name));
  }

  /** The default style for a new vector layer's geometry; undefined for the built-in one. */
  async defaultStyleFor(ref: ProjectRef, probed: Probed): Promise<{ name: string; qml: string } | undefined> {
    const geometry = probed.type === 'vector' ? geometryClass('layer', probed.geometry)?.geometry : undefined;
    if (!geometry) return undefined;
    const name = this.defaults(ref)[geometry];
    if (name === BUILT_IN_STYLE) return undefined;
    return { name, qml: await this.read(ref, name) };
  }
}
