// The layouts of the style stores: docs/storage.md and docs/styles.md.
import { type Geometry } from '../qgis/geometry.js';
import { type ProjectRef } from './project-ref.js';

/** A style to store (its QML) or to remove (no QML). */
export interface StyleChange {
  name: string;
  qml: string | undefined;
}

/**
 * A project's styles, kept where the project is: QML files in its folder, or rows beside it in
 * PostgreSQL. Names reach it checked; writes are made holding the project's lock.
 */
export interface StyleStore {
  /** The project's style names, sorted. */
  names(ref: ProjectRef): Promise<string[]>;
  /** The style's QML document; undefined when the project has no such style. */
  read(ref: ProjectRef, name: string): Promise<string | undefined>;
  /** Stores and removes styles, all or none where the store can (PostgreSQL). */
  apply(ref: ProjectRef, changes: readonly StyleChange[]): Promise<void>;
  /** The default style of each geometry (`default`, QGIS's own, unless set). */
  defaults(ref: ProjectRef): Promise<Record<Geometry, string>>;
  setDefault(ref: ProjectRef, geometry: Geometry, name: string): Promise<void>;
  /**
   * The folder the images of a style package are kept in, each a file QGIS Server reads; undefined
   * when the store keeps them in the style itself, embedded (`base64:`), as QGIS Server draws them.
   */
  imagesDir(ref: ProjectRef, name: string): string | undefined;
  /** The image folders of the project's styles (of styles removed too, until they are pruned). */
  imageFolders(ref: ProjectRef): string[];
}

/** The default style of each geometry from the rows that set one: QGIS's own (`default`) for the others. */
export function defaultStyles(rows: Iterable<{ geometry: Geometry; style: string }>): Record<Geometry, string> {
  const styles = { point: 'default', line: 'default', polygon: 'default' };
  for (const row of rows) styles[row.geometry] = row.style;
  return styles;
}
