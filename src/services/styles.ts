import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';

import { BadRequest, Conflict, NotFound, Unprocessable } from '../errors.js';
import { layerExpressionFields } from '../qgis/field-types.js';
import { geometryClass } from '../qgis/geometry.js';
import { type LayerEntry, type ProjectDocument } from '../qgis/project.js';
import {
  currentLayerStyleName,
  layerStyleNames,
  putLayerStyle,
  removeLayerStyle,
  resolveLayerStyle,
  setCurrentLayerStyle,
  shownStyleName,
} from '../qgis/style/layer-styles.js';
import { describeQml, qmlToStyle, styleToQml } from '../qgis/style/qml.js';
import { type QmlFacts, qmlFacts } from '../qgis/style/qml-document.js';
import { styleBands } from '../qgis/style/raster-qml.js';
import { type RasterStyle, type Style, type VectorStyle } from '../qgis/style/schema.js';
import { parseStyle } from '../qgis/style/validate.js';
import { styleFieldsUsed } from '../qgis/style-fields.js';
import { styleReferences } from '../qgis/style-references.js';
import { type SymbologyCatalogue } from '../qgis/symbology/catalogue.js';
import { MarkupMemo } from '../qgis/xml/markup-memo.js';
import { type XmlElement } from '../qgis/xml/node.js';
import { parseXml } from '../qgis/xml/parse.js';
import { type ProjectRef } from '../storage/project-store.js';
import { layerNotFound, type LayerService } from './layers.js';
import { checkName } from './names.js';
import { estimatedBytes, LruCache } from './project-cache.js';
import { BUILT_IN_STYLE, GEOMETRIES, type Geometry, type ProjectStyles } from './project-styles.js';
import { type ProjectRepository } from './repository.js';

/** Told when a layer's current style changes, e.g. to clear its cached tiles. */
export interface StyleLifecycle {
  layerStyleChanged?(ref: ProjectRef, layer: string): Promise<void>;
}

/** A stored style: made from a JSON body (and read back as one), or a QML document as QGIS wrote it. */
type StoredStyle = { origin: 'json'; style: Style; qml: string } | { origin: 'qml'; facts: QmlFacts; qml: string };

/** Estimated bytes of the styles kept read, by their QML: a few milliseconds of parsing each. */
const READ_STYLES_BYTES = 4 * 1024 * 1024;

export interface DefaultStyleRequest {
  name?: string;
  style?: string;
  geometry: string;
}

/** The files each stored style names, by its QML's bytes: every style write looks through them all. */
const STYLE_FILES = new MarkupMemo<readonly string[]>(1024);

/**
 * The SVG files and images a stored style names, parsed once for the same bytes: a style write
 * then costs a digest of each other style rather than a parse, which a large style makes slow and
 * heavy (docs/project-edits.md), and no two parsed styles are held at once.
 */
function filesNamedBy(qml: string): readonly string[] {
  return STYLE_FILES.get(Buffer.from(qml), () => {
    let root: XmlElement;
    try {
      root = parseXml(qml).root;
    } catch {
      return [];
    }
    const { svg, images } = styleReferences(root);
    return [...svg, ...images];
  });
}

/** The layer's `<maplayer>` element; NotFound when the project has no such layer. */
function mapLayerOf(document: ProjectDocument, ref: ProjectRef, name: string): XmlElement {
  const element = document.mapLayerElement(name);
  if (!element) throw layerNotFound(ref, name);
  return element;
}

/** Whether the style's QML takes values from the layer it is applied to: a JSON raster style with MinMax limits. */
function dependsOnLayer(stored: StoredStyle): boolean {
  if (stored.origin === 'qml' || stored.style.type !== 'raster') return false;
  const symbology = stored.style.symbology;
  if (symbology.type === 'singlebandpseudocolor') return false;
  return symbology.properties.contrast_enhancement?.limits_min_max !== 'UserDefined';
}

/** A layer a stored style is given to as it is stored, made its current style with `current`. */
export interface StyleTarget {
  layer: string;
  current: boolean;
}

/** How a style is stored: the layer given it besides those having it, and what is checked of those layers. */
export interface StoreOptions {
  target?: StyleTarget;
  /** The JSON style the QML was written from: a layer getting it must have its field or bands. */
  style?: Style;
  /** A vector layer getting the QML must have the fields it reads (unless they are its own expression fields). */
  checkFields?: boolean;
  /**
   * Writes what the style needs beside the project and its styles (a package's images) once every
   * check passed, under the project's lock: a refused style writes nothing, and no pruning of
   * images runs between these files and the write that names them.
   */
  beforeWrite?: () => Promise<void>;
}

/** The layers that get style `name` when it is stored: those that have it, and `target`'s. */
function receivingLayers(document: ProjectDocument, name: string, target: StyleTarget | undefined): string[] {
  const having = document.layers().filter((layer) => {
    const element = document.mapLayerElement(layer.name);
    return element !== undefined && layerStyleNames(element).includes(name);
  });
  const names = having.map((layer) => layer.name);
  return target && !names.includes(target.layer) ? [...names, target.layer] : names;
}

/**
 * Puts style `name` in every layer that has it and in `target`'s layer; answers the layers that
 * draw it now or drew it before (their maps change).
 */
function putInLayers(
  document: ProjectDocument,
  ref: ProjectRef,
  name: string,
  qml: string,
  target: StyleTarget | undefined,
): string[] {
  const drawn: string[] = [];
  for (const layer of document.layers()) {
    const element = document.mapLayerElement(layer.name);
    if (!element || layer.name === target?.layer || !layerStyleNames(element).includes(name)) continue;
    putLayerStyle(element, name, qml, false);
    if (currentLayerStyleName(element) === name) drawn.push(layer.name);
  }
  if (target) {
    const element = mapLayerOf(document, ref, target.layer);
    const wasCurrent = currentLayerStyleName(element) === name;
    putLayerStyle(element, name, qml, target.current);
    if (target.current || wasCurrent) drawn.push(target.layer);
  }
  document.invalidate();
  return drawn;
}

function styleSummary(name: string, created: boolean, target: StyleTarget | undefined): string {
  const stored = `${created ? 'added' : 'replaced'} style ${name}`;
  if (!target) return stored;
  return `${stored}${target.current ? ', the style of' : ', given to'} layer ${target.layer}`;
}

export class StyleService {
  /** Styles as read from their QML, for each catalogue they were read with. */
  private readonly readStyles = new WeakMap<SymbologyCatalogue, LruCache<{ bytes: number; stored: StoredStyle }>>();

  constructor(
    private readonly repository: ProjectRepository,
    private readonly layers: LayerService,
    private readonly styles: ProjectStyles,
    /** The symbology catalogue of the administered QGIS Server version, as it is now. */
    private readonly catalogue: () => SymbologyCatalogue,
    private readonly lifecycle: StyleLifecycle = {},
  ) {}

  async list(ref: ProjectRef): Promise<string[]> {
    await this.repository.read(ref);
    return this.styles.names(ref);
  }

  /** The style's JSON body when it was made from one, else its QML document. */
  async get(ref: ProjectRef, name: string): Promise<Style | string> {
    const stored = await this.load(ref, name);
    return stored.origin === 'json' ? stored.style : stored.qml;
  }

  /**
   * The style as a JSON body, whichever way it was made, when the JSON styles can say all it
   * draws (e.g. a categorized style QGIS Desktop wrote); Unprocessable saying why otherwise.
   */
  async describe(ref: ProjectRef, name: string): Promise<Style> {
    const stored = await this.load(ref, name);
    return stored.origin === 'json' ? stored.style : describeQml(stored.qml, name, this.catalogue());
  }

  /**
   * The style's QML document, whichever way it was made. A raster style made from JSON whose
   * limits are the layer's minimum and maximum holds the values a layer draws with: those of
   * `layerName`, else of the first layer drawing with the style, else of the first having it
   * (QGIS reads no limits from a QML without them, and draws such a style as a flat grey).
   */
  async getQml(ref: ProjectRef, name: string, layerName?: string): Promise<string> {
    const stored = await this.load(ref, name);
    if (layerName === undefined && !dependsOnLayer(stored)) return stored.qml;
    const document = await this.repository.read(ref);
    const layers = document.layers();
    let layer: LayerEntry | undefined;
    if (layerName !== undefined) {
      layer = await this.layers.entry(ref, layerName);
    } else {
      const having = layers.filter((candidate) => {
        const element = document.mapLayerElement(candidate.name);
        return element !== undefined && layerStyleNames(element).includes(name);
      });
      layer = having.find((candidate) => candidate.currentStyle === name) ?? having[0];
    }
    return layer ? this.qmlForLayer(ref, layer, stored) : stored.qml;
  }

  private async load(ref: ProjectRef, name: string): Promise<StoredStyle> {
    await this.repository.read(ref);
    const qml = await this.styles.read(ref, name);
    const catalogue = this.catalogue();
    let read = this.readStyles.get(catalogue);
    if (!read) this.readStyles.set(catalogue, (read = new LruCache(READ_STYLES_BYTES)));
    const key = `${name}\u0000${qml}`;
    const known = read.get(key)?.stored;
    if (known) return known;
    const stored = this.stored(qml, name, catalogue);
    read.set(key, { bytes: estimatedBytes(key.length), stored });
    return stored;
  }

  /** A QML that Steward's own writer gives back unchanged from its JSON reading was made from JSON. */
  private stored(qml: string, name: string, catalogue: SymbologyCatalogue): StoredStyle {
    try {
      const style = qmlToStyle(qml, name, catalogue);
      if (styleToQml(style, { catalogue }) === qml) return { origin: 'json', style, qml };
    } catch {
      // Not a style the JSON codec describes: a QML from QGIS.
    }
    return { origin: 'qml', facts: qmlFacts(qml), qml };
  }

  /**
   * Stores a QML document as QGIS wrote it as style `name`, or replaces that style, in the style
   * manager of every layer that has it too, and in `target`'s layer, as its current style when it
   * says so: one write, one version. Answers whether the style is new. BadRequest for a document
   * that is not a QGIS style, Unprocessable for one a layer using it cannot draw with (or lacks the
   * fields of, as `options` asks).
   */
  async putQml(ref: ProjectRef, name: string, qml: string, options: StoreOptions = {}): Promise<boolean> {
    const { target } = options;
    checkName('style', name);
    if (name === BUILT_IN_STYLE) throw new Conflict(`"${BUILT_IN_STYLE}" is the built-in style`);
    qmlFacts(qml);
    await this.repository.read(ref);
    if (!target && !(await this.styles.has(ref, name))) {
      const isNew = async (): Promise<boolean> => {
        if (await this.styles.has(ref, name)) return false;
        await options.beforeWrite?.();
        return true;
      };
      if (await this.repository.changeStyles(ref, [{ name, qml }], `added style ${name}`, isNew)) return true;
    }
    let created = false;
    const drawn = await this.repository.update(
      ref,
      async (document) => {
        created = !(await this.styles.has(ref, name));
        const receiving = receivingLayers(document, name, target);
        if (options.style) await this.checkLayers(ref, document, receiving, options.style);
        else if (options.checkFields) await this.checkQmlFields(ref, document, receiving, name, qml);
        const drawn = putInLayers(document, ref, name, qml, target);
        await options.beforeWrite?.();
        return drawn;
      },
      [{ name, qml }],
      () => styleSummary(name, created, target),
    );
    for (const layer of drawn) await this.lifecycle.layerStyleChanged?.(ref, layer);
    return created;
  }

  /** The layers QGIS Server draws with the style: those whose current style it is. */
  async layersDrawing(ref: ProjectRef, name: string): Promise<string[]> {
    const project = await this.repository.read(ref);
    return project
      .layers()
      .filter((layer) => layer.currentStyle === name)
      .map((layer) => layer.name);
  }

  /** Stores a new style as `<name>.qml`; the name comes from the path when given there. */
  async add(ref: ProjectRef, body: unknown, pathName?: string): Promise<void> {
    const named = pathName === undefined ? body : this.nameFromPath(body, pathName);
    const style = parseStyle(named, this.catalogue());
    checkName('style', style.name);
    if (style.name === BUILT_IN_STYLE) throw new Conflict(`"${BUILT_IN_STYLE}" is the built-in style`);
    const qml = styleToQml(style, { catalogue: this.catalogue() });
    checkName('style', style.name);
    await this.repository.changeStyles(ref, [{ name: style.name, qml }], `added style ${style.name}`, async () => {
      if (await this.styles.has(ref, style.name)) {
        throw new Conflict(`project "${ref.name}" already has a style "${style.name}"`, { code: 'name_taken' });
      }
      return true;
    });
  }

  /**
   * Stores a JSON style as style `name`, or replaces it, in one write (in every layer that has it,
   * and in `target`'s, as putQml does); answers whether the style is new. Unprocessable naming the
   * field when a layer getting it lacks the field the style classes features by.
   */
  async put(ref: ProjectRef, name: string, body: unknown, target?: StyleTarget): Promise<boolean> {
    const style = parseStyle(this.nameFromPath(body, name), this.catalogue());
    return this.putQml(ref, name, styleToQml(style, { catalogue: this.catalogue() }), { target, style });
  }

  /**
   * The QML layer `layerName` would draw a JSON style with, stored nowhere (a style being edited):
   * BadRequest for a body that is not a JSON style, Unprocessable when the layer cannot draw it.
   */
  async draftQml(ref: ProjectRef, layerName: string, body: unknown): Promise<string> {
    const style = parseStyle(body, this.catalogue());
    const document = await this.repository.read(ref);
    const layer = await this.layers.entry(ref, layerName);
    if (layer.type !== style.type)
      throw new Unprocessable(`layer "${layerName}" is a ${layer.type} layer: it cannot draw a ${style.type} style`);
    await this.checkLayers(ref, document, [layerName], style);
    const qml = styleToQml(style, { catalogue: this.catalogue() });
    return this.qmlForLayer(ref, layer, { origin: 'json', style, qml });
  }

  /**
   * Unprocessable when one of `layers` cannot draw the JSON style: it lacks the field a categorized
   * or graduated style classes by, or a band the style reads.
   */
  private async checkLayers(ref: ProjectRef, document: ProjectDocument, layers: string[], style: Style): Promise<void> {
    for (const name of layers) {
      const entry = document.layers().find((layer) => layer.name === name);
      const element = document.mapLayerElement(name);
      if (!entry || !element || entry.type !== style.type) continue;
      if (style.type === 'raster') await this.checkBands(ref, entry, style);
      else await this.checkField(ref, entry, element, style);
    }
  }

  /**
   * The fields of a vector layer: its source's as GDAL reads them (the key column too), those its
   * joins add, and its expression fields; undefined when GDAL does not read its source or cannot now.
   */
  private async fieldsOf(ref: ProjectRef, entry: LayerEntry, element: XmlElement): Promise<string[] | undefined> {
    const source = await this.layers.fieldNames(ref, entry).catch(() => undefined);
    if (!source) return undefined;
    const joined = await this.layers.joinedFields(ref, entry.name);
    return [...source, ...[...joined, ...layerExpressionFields(element)].map((field) => field.name)];
  }

  private async checkField(ref: ProjectRef, entry: LayerEntry, element: XmlElement, style: VectorStyle): Promise<void> {
    if (style.symbology.type === 'single_symbol') return;
    const field = style.symbology.field;
    const fields = await this.fieldsOf(ref, entry, element);
    if (fields === undefined || fields.includes(field)) return;
    throw new Unprocessable(
      `layer "${entry.name}" has no field "${field}", by which style "${style.name}" classes its features (its fields: ${fields.join(', ') || 'none'})`,
    );
  }

  /**
   * Unprocessable, naming them, when one of the vector `layers` lacks fields QML style `name` reads
   * (its renderer's attribute, its rules' filters, its labels' field, its data-defined properties'),
   * but the expression fields the QML brings, which the layer gets with it.
   */
  private async checkQmlFields(
    ref: ProjectRef,
    document: ProjectDocument,
    layers: string[],
    name: string,
    qml: string,
  ): Promise<void> {
    const root = parseXml(qml).root;
    const brought = new Set(layerExpressionFields(root).map((field) => field.name));
    const used = styleFieldsUsed(root).filter((field) => !brought.has(field));
    if (used.length === 0) return;
    for (const layer of layers) {
      const entry = document.layer(layer);
      const element = document.mapLayerElement(layer);
      if (!entry || !element || entry.type !== 'vector') continue;
      const fields = await this.fieldsOf(ref, entry, element);
      const missing = fields === undefined ? [] : used.filter((field) => !fields.includes(field));
      if (missing.length === 0) continue;
      throw new Unprocessable(
        `layer "${layer}" has no field ${missing.map((field) => `"${field}"`).join(', ')}, which style "${name}" reads ` +
          `(its fields: ${fields?.join(', ') || 'none'}); store it with ?force=true all the same`,
        { code: 'fields_missing' },
      );
    }
  }

  private async checkBands(ref: ProjectRef, entry: LayerEntry, style: RasterStyle): Promise<void> {
    const { probed } = await this.layers.inspect(ref, entry);
    if (probed?.type !== 'raster') return;
    const missing = styleBands(style).find((band) => band > probed.bands);
    if (missing === undefined) return;
    throw new Unprocessable(
      `style "${style.name}" reads band ${missing}, which layer "${entry.name}" does not have (it has ${probed.bands})`,
    );
  }

  private nameFromPath(body: unknown, pathName: string): unknown {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
    const given = (body as { name?: unknown }).name;
    if (given !== undefined && given !== pathName) {
      throw new BadRequest(`the body names style ${JSON.stringify(given)} but the path names "${pathName}"`);
    }
    return { ...body, name: pathName };
  }

  /**
   * Removes a style from every layer that has it and from the project's styles; refused while a
   * layer draws with it, and while it is a default style, which every new layer of its geometry
   * would then miss.
   */
  async remove(ref: ProjectRef, name: string): Promise<void> {
    await this.styles.read(ref, name);
    await this.repository.update(
      ref,
      async (document) => {
        const defaults = await this.styles.defaults(ref);
        const geometry = GEOMETRIES.find((candidate) => defaults[candidate] === name);
        if (geometry)
          throw new Conflict(`style "${name}" is the default style of ${geometry} layers: set another default first`, {
            code: 'style_in_use',
          });
        for (const layer of document.layers()) {
          if (layer.currentStyle === name) {
            throw new Conflict(`style "${name}" is the current style of layer "${layer.name}"`, {
              code: 'style_in_use',
            });
          }
        }
        for (const layer of document.layers()) {
          const element = document.mapLayerElement(layer.name);
          if (element && layerStyleNames(element).includes(name)) removeLayerStyle(element, name);
        }
        document.invalidate();
      },
      [{ name, qml: undefined }],
      `removed style ${name}`,
    );
    await this.pruneImages(ref);
  }

  /**
   * Removes the images packages brought that nothing names any more: no style of the project and
   * no layer (its current style and the copies in its style manager). An image another style names
   * (a QML downloaded from a package's style and uploaded as another) stays. Holds the project's
   * lock, so that no style is stored while the names are gathered and the files removed.
   */
  async pruneImages(ref: ProjectRef): Promise<void> {
    const folders = this.styles.imageFolders(ref);
    if (folders.length === 0) return;
    await this.repository.store.withLock(ref, async () => {
      const named = await this.namedFiles(ref);
      for (const dir of folders) {
        for (const file of await readdir(dir).catch(() => [])) {
          if (!named.has(join(dir, file))) await this.removeImage(ref, join(dir, file));
        }
        await rmdir(dir).catch(() => undefined);
      }
    });
  }

  /** Removes an image, kept first for the versions that may name it when the project keeps versions. */
  private async removeImage(ref: ProjectRef, file: string): Promise<void> {
    const { store } = this.repository;
    if (this.repository.keepsVersions && store.versions.keepFile) {
      const bytes = await readFile(file).catch(() => undefined);
      if (bytes) await store.versions.keepFile(ref, relative(store.dataDir(ref), file), bytes);
    }
    await rm(file, { force: true });
  }

  /** Every file the project's styles and layers name, as absolute paths. */
  private async namedFiles(ref: ProjectRef): Promise<Set<string>> {
    const document = await this.repository.read(ref);
    const named = new Set<string>();
    const add = (files: readonly string[]): void => {
      for (const file of files) named.add(resolve(file));
    };
    for (const layer of document.layers()) {
      const element = document.mapLayerElement(layer.name);
      if (element) {
        const { svg, images } = styleReferences(element);
        add([...svg, ...images]);
      }
    }
    for (const style of await this.styles.names(ref)) {
      const qml = await this.styles.read(ref, style).catch(() => undefined);
      if (qml !== undefined) add(filesNamedBy(qml));
    }
    return named;
  }

  async defaults(ref: ProjectRef): Promise<Record<Geometry, string>> {
    await this.repository.read(ref);
    return this.styles.defaults(ref);
  }

  async setDefault(ref: ProjectRef, request: DefaultStyleRequest): Promise<void> {
    const name = request.name ?? request.style;
    if (name === undefined) throw new BadRequest('give the style as "name" (or "style")');
    const geometry = request.geometry.toLowerCase() as Geometry;
    if (!GEOMETRIES.includes(geometry)) {
      throw new BadRequest(`geometry must be one of ${GEOMETRIES.join(', ')}, not "${request.geometry}"`);
    }
    if (name !== BUILT_IN_STYLE) {
      const stored = await this.load(ref, name);
      const draws =
        stored.origin === 'json'
          ? stored.style.type === 'vector' &&
            geometryClass('symbol', stored.style.symbology.symbol)?.geometry === geometry
          : stored.facts.kind === 'vector' && stored.facts.geometry === geometry;
      if (!draws) throw new BadRequest(`style "${name}" cannot draw ${geometry} layers`);
    }
    await this.repository.read(ref);
    await this.styles.setDefault(ref, geometry, name);
  }

  /** The style's QML for this layer: raster MinMax limits take the layer's own statistics. */
  private async qmlForLayer(ref: ProjectRef, layer: LayerEntry, stored: StoredStyle): Promise<string> {
    // A style read as JSON is one its QML gives back unchanged; only a raster's limits depend on the layer.
    if (stored.origin === 'qml' || stored.style.type === 'vector') return stored.qml;
    const style = stored.style;
    const inspection = await this.layers.inspect(ref, layer);
    const ranges = inspection.probed?.type === 'raster' ? inspection.probed.bandRanges : [];
    return styleToQml(style, {
      catalogue: this.catalogue(),
      bandStatistics: new Map(ranges.map((range, index) => [index + 1, range])),
    });
  }

  /**
   * Adds (or updates) a style in a layer's style manager; with `current`, QGIS Server draws it by
   * default. A name the project has no style of names one the layer's style manager holds already
   * (its original: "default", the unnamed style of a QGIS 2 project, "défaut"...), in any case.
   */
  async applyToLayer(ref: ProjectRef, layerName: string, request: { name: string; current?: boolean }): Promise<void> {
    const layer = await this.layers.entry(ref, layerName);
    const current = request.current ?? false;
    if (request.name === BUILT_IN_STYLE || !(await this.styles.has(ref, request.name)))
      return this.applyLayerOwn(ref, layerName, request.name, current);
    const stored = await this.load(ref, request.name);
    if (stored.origin === 'json')
      await this.checkLayers(ref, await this.repository.read(ref), [layerName], stored.style);
    const qml = await this.qmlForLayer(ref, layer, stored);
    // Steward's own styles hold QGIS's default rendering, not a choice: the layer keeps its own.
    const options = { keepLayerRendering: stored.origin === 'json' };
    const changed = await this.repository.update(
      ref,
      (document) => {
        const element = mapLayerOf(document, ref, layerName);
        const wasCurrent = currentLayerStyleName(element);
        putLayerStyle(element, request.name, qml, current, options);
        document.invalidate(layerName);
        return current || wasCurrent === request.name;
      },
      [],
      current ? `style of ${layerName} → ${request.name}` : `gave layer ${layerName} style ${request.name}`,
    );
    if (changed) await this.lifecycle.layerStyleChanged?.(ref, layerName);
  }

  /** A style of the layer's own style manager, made current again with `current`. */
  private async applyLayerOwn(ref: ProjectRef, layerName: string, requested: string, current: boolean): Promise<void> {
    const outcome = await this.repository.update(
      ref,
      (document) => {
        const element = mapLayerOf(document, ref, layerName);
        const name = resolveLayerStyle(element, requested);
        if (name === undefined) {
          const own = layerStyleNames(element).map((style) => JSON.stringify(shownStyleName(style)));
          throw new NotFound(
            `project "${ref.name}" has no style "${requested}" and layer "${layerName}" has none of that name ` +
              `(its styles: ${own.join(', ') || 'none'})`,
            { code: 'style_not_found' },
          );
        }
        const wasCurrent = currentLayerStyleName(element) === name;
        if (current) setCurrentLayerStyle(element, name);
        document.invalidate(layerName);
        return { name, changed: current && !wasCurrent };
      },
      [],
      ({ name }) => (current ? `style of ${layerName} → ${name}` : `kept style ${name} of layer ${layerName}`),
    );
    const changed = outcome.changed;
    if (changed) await this.lifecycle.layerStyleChanged?.(ref, layerName);
  }
}
