/**
 * The styles Steward kept in a database project's data folder before it kept them in the database
 * (`<style>.qml`, the images of packages in `images/<style>/`, the default styles in steward.db),
 * read for the database to hold them: each style with the images it names in that folder embedded,
 * so that it draws on every host.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';

import { type Geometry } from '../qgis/geometry.js';
import { embeddedImage, rewriteStyleFiles } from '../qgis/style-references.js';
import { parseXml } from '../qgis/xml/parse.js';
import { serializeXml } from '../qgis/xml/serialize.js';
import { INTERNAL_DB_NAME, InternalDatabase } from './internal-db.js';

export interface FolderStyles {
  /** Each style's name and its QML, images of the folder embedded. */
  styles: Array<{ name: string; qml: string }>;
  /** The default styles set otherwise than QGIS's own. */
  defaults: Array<{ geometry: Geometry; style: string }>;
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The QML with the images it names under `images` embedded; as it was when it names none (a JSON style's QML stays byte for byte). */
function withImagesEmbedded(qml: string, images: string): string {
  let document;
  try {
    document = parseXml(qml);
  } catch {
    return qml;
  }
  let embedded = false;
  rewriteStyleFiles(document.root, (file) => {
    const path = resolve(file);
    if (!path.startsWith(images + sep) || !existsSync(path)) return undefined;
    embedded = true;
    return embeddedImage(readFileSync(path));
  });
  return embedded ? serializeXml(document) : qml;
}

/** The styles kept in the data folder `dir`; none when it holds none. */
export function folderStyles(dir: string): FolderStyles {
  const images = join(dir, 'images');
  const styles = entries(dir)
    .filter((entry) => entry.endsWith('.qml') && !entry.startsWith('.'))
    .map((entry) => ({
      name: entry.slice(0, -'.qml'.length),
      qml: withImagesEmbedded(readFileSync(join(dir, entry), 'utf8'), images),
    }));
  const set = existsSync(join(dir, INTERNAL_DB_NAME))
    ? InternalDatabase.use(dir, (db) => Object.entries(db.defaultStyles()) as Array<[Geometry, string]>)
    : [];
  const defaults = set.filter(([, style]) => style !== 'default').map(([geometry, style]) => ({ geometry, style }));
  return { styles, defaults };
}

/**
 * Removes the style files and the internal database the database now holds; the images stay, as
 * the copies of the styles in the project's layers name them.
 */
export async function removeFolderStyles(dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) await rm(join(dir, `${name}.qml`), { force: true });
  await rm(join(dir, INTERNAL_DB_NAME), { force: true });
}
