import { NotFound } from '../errors.js';
import { type Probed } from '../gdal/probe.js';
import { GEOMETRIES, type Geometry, geometryClass } from '../qgis/geometry.js';
import { type ProjectRef, type ProjectStore } from '../storage/project-store.js';
import { type StyleChange } from '../storage/style-store.js';
import { checkName } from './names.js';

/** The style every layer starts with: QGIS's own default symbology, not a stored style. */
export const BUILT_IN_STYLE = 'default';

export { GEOMETRIES, type Geometry };

/**
 * A project's styles as its store keeps them (files beside a project file, rows beside a project
 * in PostgreSQL), by checked names, and its default style per geometry.
 */
export class ProjectStyles {
  constructor(private readonly store: ProjectStore) {}

  names(ref: ProjectRef): Promise<string[]> {
    return this.store.styles.names(ref);
  }

  async has(ref: ProjectRef, name: string): Promise<boolean> {
    return (await this.names(ref)).includes(name);
  }

  /** The style's QML; NotFound when the project has no such style. */
  async read(ref: ProjectRef, name: string): Promise<string> {
    const qml = await this.store.styles.read(ref, checkName('style', name));
    if (qml === undefined)
      throw new NotFound(`project "${ref.name}" has no style "${name}"`, { code: 'style_not_found' });
    return qml;
  }

  /** Stores and removes styles without writing the project; the caller holds the project's lock. */
  apply(ref: ProjectRef, changes: readonly StyleChange[]): Promise<void> {
    for (const { name } of changes) checkName('style', name);
    return this.store.styles.apply(ref, changes);
  }

  /** The folder a style package's images are kept in; undefined when they are embedded in the style. */
  imagesDir(ref: ProjectRef, name: string): string | undefined {
    return this.store.styles.imagesDir(ref, checkName('style', name));
  }

  /** The image folders of the project's styles (of styles removed too, until they are pruned). */
  imageFolders(ref: ProjectRef): string[] {
    return this.store.styles.imageFolders(ref);
  }

  defaults(ref: ProjectRef): Promise<Record<Geometry, string>> {
    return this.store.styles.defaults(ref);
  }

  setDefault(ref: ProjectRef, geometry: Geometry, name: string): Promise<void> {
    return this.store.styles.setDefault(ref, geometry, name);
  }

  /** The default style for a new vector layer's geometry; undefined for the built-in one. */
  async defaultStyleFor(ref: ProjectRef, probed: Probed): Promise<{ name: string; qml: string } | undefined> {
    const geometry = probed.type === 'vector' ? geometryClass('layer', probed.geometry)?.geometry : undefined;
    if (!geometry) return undefined;
    const name = (await this.defaults(ref))[geometry];
    if (name === BUILT_IN_STYLE) return undefined;
    return { name, qml: await this.read(ref, name) };
  }
}
