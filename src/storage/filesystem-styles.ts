import { readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { type Geometry } from '../qgis/geometry.js';
import { writeFileAtomic } from './atomic-file.js';
import { InternalDatabase } from './internal-db.js';
import { type ProjectRef } from './project-store.js';
import { type StyleChange, type StyleStore } from './style-store.js';

/** Larger styles (images embedded in their QML) are read on the thread pool. */
const SYNC_READ_BYTES = 256 * 1024;

function listing(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Styles as `<style>.qml` files in the project's folder, the images of packages in
 * `images/<style>/` there, and the default style of each geometry in its internal database.
 */
export class FilesystemStyles implements StyleStore {
  constructor(private readonly dataDir: (ref: ProjectRef) => string) {}

  private path(ref: ProjectRef, name: string): string {
    return join(this.dataDir(ref), `${name}.qml`);
  }

  /** Read synchronously: a listing of one small folder costs less than the thread-pool hand-off. */
  async names(ref: ProjectRef): Promise<string[]> {
    return listing(this.dataDir(ref))
      .filter((entry) => entry.endsWith('.qml') && !entry.startsWith('.'))
      .map((entry) => entry.slice(0, -4))
      .sort();
  }

  /**
   * A style of up to SYNC_READ_BYTES is read synchronously: its four hand-offs to the thread pool
   * (open, stat, read, close) took longer than reading it: milliseconds of a style write under load.
   */
  async read(ref: ProjectRef, name: string): Promise<string | undefined> {
    const path = this.path(ref, name);
    try {
      const size = statSync(path).size;
      return size <= SYNC_READ_BYTES ? readFileSync(path, 'utf8') : await readFile(path, 'utf8');
    } catch {
      return undefined;
    }
  }

  /** Each file is replaced atomically; the changes one after the other. */
  async apply(ref: ProjectRef, changes: readonly StyleChange[]): Promise<void> {
    for (const { name, qml } of changes) {
      if (qml === undefined) await rm(this.path(ref, name), { force: true });
      else await writeFileAtomic(this.path(ref, name), qml);
    }
  }

  async defaults(ref: ProjectRef): Promise<Record<Geometry, string>> {
    return InternalDatabase.use(this.dataDir(ref), (db) => db.defaultStyles());
  }

  async setDefault(ref: ProjectRef, geometry: Geometry, name: string): Promise<void> {
    InternalDatabase.use(this.dataDir(ref), (db) => db.setDefaultStyle(geometry, name));
  }

  /**
   * `images/<style>/` in the project's folder, each image named by its SHA-256 so that a replaced
   * package never rewrites a file a stored style still names.
   */
  imagesDir(ref: ProjectRef, name: string): string {
    return join(this.dataDir(ref), 'images', name);
  }

  imageFolders(ref: ProjectRef): string[] {
    const root = join(this.dataDir(ref), 'images');
    return listing(root).map((entry) => join(root, entry));
  }
}
