/**
 * Datasources of the `ogr` and `gdal` providers, files as QGIS writes them: the path, then options
 * after `|` (`./data/roads.gpkg|layername=roads`), the path relative to the project's folder
 * (`./` or `../` first) unless the project asks for absolute paths.
 */
import { posix } from 'node:path';

import { childText, path, setText, type XmlElement } from './xml/node.js';

/** The providers whose datasource is a file path and options. */
export const FILE_PROVIDERS: ReadonlySet<string> = new Set(['ogr', 'gdal']);

export interface FileDatasource {
  path: string;
  /** The options after the path, each without its `|`. */
  options: string[];
}

export function splitFileDatasource(datasource: string): FileDatasource {
  const [path = '', ...options] = datasource.split('|');
  return { path, options };
}

export function joinFileDatasource({ path, options }: FileDatasource): string {
  return [path, ...options].join('|');
}

/** Whether QGIS reads `path` relative to the project's folder. */
export function isProjectRelative(path: string): boolean {
  return /^\.\.?\//.test(path);
}

/** `file` (absolute, POSIX) as QGIS writes it relative to `projectDir`: `./data/x.gpkg`, `../x.tif`. */
export function relativeToProject(projectDir: string, file: string): string {
  const relative = posix.relative(projectDir, file);
  return relative.startsWith('../') ? relative : `./${relative}`;
}

/** Whether the project keeps absolute paths (Project Properties, "Save paths": absolute). */
export function savesAbsolutePaths(root: XmlElement): boolean {
  const value = childText(root, 'properties', 'Paths', 'Absolute').trim().toLowerCase();
  return value === 'true' || value === '1';
}

/** Makes the project save relative paths, as QGIS then reads `./` and `../` paths (an absolute project does not). */
export function saveRelativePaths(root: XmlElement): void {
  const setting = path(root, 'properties', 'Paths', 'Absolute');
  if (setting) setText(setting, 'false');
}
