/**
 * Styles uploaded as QGIS Desktop made them, checked for what QGIS Server needs to draw them: a QML
 * document, whose images must be on the server, or a style package, a zip of a QML and the SVG and
 * raster images it draws with. A package's images are kept in the project's data folder (or, for a
 * project in PostgreSQL, embedded in the style) and the style's paths rewritten to them, so QGIS
 * Server draws what QGIS Desktop drew. Fonts the style uses that no QGIS Server instance has are
 * warnings.
 */
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, extname, isAbsolute, join } from 'node:path';

import { BadRequest, Unprocessable } from '../errors.js';
import { fontAbsences, type InstanceFonts } from '../insight/instance-fonts.js';
import { qmlFacts } from '../qgis/style/qml-document.js';
import { embeddedImage, rewriteStyleFiles, type StyleReferences, styleReferences } from '../qgis/style-references.js';
import { parseXml } from '../qgis/xml/parse.js';
import { serializeXml } from '../qgis/xml/serialize.js';
import { writeFileAtomic } from '../storage/atomic-file.js';
import { type ProjectRef } from '../storage/project-store.js';
import { declaredSizes, unzipEntries, type ZipLimits } from '../storage/zip-entries.js';
import { packagedEntry, withoutSystemFiles } from './bundle-entries.js';
import { layerNotFound } from './layers.js';
import { checkName } from './names.js';
import { type ProjectStyles } from './project-styles.js';
import { type ProjectRepository } from './repository.js';
import { SAFE_IMAGE_EXTENSIONS, type StyleFiles } from './style-files.js';
import { type StoreOptions, type StyleService, type StyleTarget } from './styles.js';

export interface StyleAnswer {
  /** Whether the style is new. */
  created: boolean;
  /** What QGIS Server will draw otherwise than QGIS Desktop did, and what of a package was not kept. */
  warnings: string[];
}

/** How an upload is stored: the layer given it, and whether the layers getting it are checked for the fields it reads. */
export type UploadOptions = Pick<StoreOptions, 'target' | 'checkFields'>;

export interface PackageAnswer extends StyleAnswer {
  /** The package's images the style draws with, now kept with the project. */
  images: string[];
}

/** Most entries a package may hold. */
const MAX_ENTRIES = 1000;
/** A package may unpack to this many times the bytes a style upload may have. */
const UNPACKED_FACTOR = 4;

/** Where each used entry is kept in the style's image folder `dir`: named by the SHA-256 of its bytes. */
function keptPaths(dir: string, used: Set<string>, entries: Map<string, Buffer>): Map<string, string> {
  return new Map(
    [...used].map((entry) => {
      const bytes = entries.get(entry) ?? Buffer.alloc(0);
      const digest = createHash('sha256').update(bytes).digest('hex');
      return [entry, join(dir, digest + extname(entry).toLowerCase())];
    }),
  );
}

/** Writes each entry of `kept` to its path. */
async function writeKept(kept: Map<string, string>, entries: Map<string, Buffer>): Promise<void> {
  for (const [entry, path] of kept) {
    await mkdir(dirname(path), { recursive: true });
    await writeFileAtomic(path, entries.get(entry) ?? Buffer.alloc(0));
  }
}

/**
 * Unprocessable, naming them, for package entries the style uses whose extension is not an
 * image's: kept beside the project, a `.vrt` would be a dataset a layer could be made of.
 */
function checkImageExtensions(used: Set<string>): void {
  const refused = [...used].filter((entry) => !SAFE_IMAGE_EXTENSIONS.has(extname(entry).toLowerCase()));
  if (refused.length > 0) {
    throw new Unprocessable(
      `the style uses package entries that are not images: ${refused.join(', ')} ` +
        `(images are ${[...SAFE_IMAGE_EXTENSIONS].join(', ')})`,
    );
  }
}

/** The used entries as images embedded in the style. */
function embedded(used: Set<string>, entries: Map<string, Buffer>): Map<string, string> {
  return new Map([...used].map((entry) => [entry, embeddedImage(entries.get(entry) ?? Buffer.alloc(0))]));
}

export class StylePackages {
  private readonly limits: ZipLimits;

  /** `bodyLimit`: the bytes a style upload may have; `fonts`: the fonts of QGIS Server's instances. */
  constructor(
    private readonly repository: ProjectRepository,
    private readonly styles: StyleService,
    private readonly projectStyles: ProjectStyles,
    private readonly bodyLimit: number,
    private readonly fonts: InstanceFonts,
    private readonly files: StyleFiles,
  ) {
    this.limits = { entries: MAX_ENTRIES, bytes: UNPACKED_FACTOR * bodyLimit };
  }

  /**
   * The bytes of a package's QML, read from its central directory before anything is unpacked:
   * what reading the style will cost. BadRequest for an archive `put` refuses as unsafe, too large
   * unpacked, or with a QML larger than a style uploaded alone may be.
   */
  documentBytes(zip: Buffer): number {
    let total = 0;
    for (const [entry, size] of declaredSizes(zip, this.limits)) {
      if (!entry.toLowerCase().endsWith('.qml')) continue;
      if (size > this.bodyLimit)
        throw new BadRequest(`"${entry}" unpacks to ${size} bytes, more than the ${this.bodyLimit} a style may have`);
      total += size;
    }
    return total;
  }

  /**
   * Stores (or replaces) style `name` from a QML document as QGIS wrote it, like
   * StyleService.putQml, once every image it names is found on the server: Unprocessable, naming
   * them, for those that are not. With a `target`, the style is given to that layer in the same
   * write (NotFound for a layer the project lacks); with `checkFields`, the layers getting it must
   * have the fields it reads.
   */
  async putDocument(ref: ProjectRef, name: string, qml: string, options: UploadOptions = {}): Promise<StyleAnswer> {
    checkName('style', name);
    qmlFacts(qml);
    await this.checkTarget(ref, options.target);
    const references = styleReferences(parseXml(qml).root);
    await this.locate(ref, references, [], 'neither with the project nor on the server');
    const created = await this.store(ref, name, qml, options);
    return { created, warnings: await this.fontWarnings(references.fonts) };
  }

  /**
   * Stores (or replaces) style `name` from a package, given to `options.target` as putDocument
   * does. BadRequest for an archive Steward does not unpack or one without exactly one QML;
   * Unprocessable, naming them, when the style names images that are neither in the package nor on
   * the server; with `checkFields`, when a layer getting it lacks fields it reads. The images are
   * written only once the style passed every check.
   */
  async put(ref: ProjectRef, name: string, zip: Buffer, options: UploadOptions = {}): Promise<PackageAnswer> {
    checkName('style', name);
    await this.checkTarget(ref, options.target);
    this.documentBytes(zip);
    const entries = withoutSystemFiles(unzipEntries(zip, this.limits));
    const qmlEntry = this.qmlEntry([...entries.keys()]);
    const qml = (entries.get(qmlEntry) ?? Buffer.alloc(0)).toString('utf8');
    qmlFacts(qml);
    const document = parseXml(qml);
    const references = styleReferences(document.root);
    const images = [...entries.keys()].filter((entry) => entry !== qmlEntry);
    const used = await this.locate(ref, references, images, 'neither in the package nor on the server');
    checkImageExtensions(new Set(used.values()));
    const dir = this.projectStyles.imagesDir(ref, name);
    const kept =
      dir === undefined ? embedded(new Set(used.values()), entries) : keptPaths(dir, new Set(used.values()), entries);
    rewriteStyleFiles(document.root, (file) => {
      const entry = used.get(file);
      return entry === undefined ? undefined : kept.get(entry);
    });
    const beforeWrite = dir === undefined ? undefined : () => writeKept(kept, entries);
    const created = await this.store(ref, name, serializeXml(document), { ...options, beforeWrite });
    const unused = images.filter((entry) => !kept.has(entry));
    return {
      created,
      images: [...kept.keys()].sort(),
      warnings: [
        ...unused.map((entry) => `"${entry}" is not used by the style and was not kept`),
        ...(await this.fontWarnings(references.fonts)),
      ],
    };
  }

  /** Reads the project (NotFound when there is none) and checks that it has the layer the style is given to. */
  private async checkTarget(ref: ProjectRef, target: StyleTarget | undefined): Promise<void> {
    const document = await this.repository.read(ref);
    if (target && !document.layer(target.layer)) throw layerNotFound(ref, target.layer);
  }

  /**
   * The package entry (of `images`) each image the style names is; Unprocessable, naming them, for
   * the images found neither there nor on the server, as QGIS Server looks for them (`where` says
   * where they were looked for).
   */
  private async locate(
    ref: ProjectRef,
    references: StyleReferences,
    images: string[],
    where: string,
  ): Promise<Map<string, string>> {
    this.files.checkRemote(references);
    const projectDir = await this.projectDir(ref);
    const used = new Map<string, string>();
    const missing: string[] = [];
    for (const [files, kind] of [
      [references.svg, 'svg'],
      [references.images, 'image'],
    ] as const) {
      for (const file of files) {
        const entry = packagedEntry(file, images);
        if (entry !== undefined) used.set(file, entry);
        else if (!(await this.files.found(file, kind, projectDir))) missing.push(file);
      }
    }
    if (missing.length > 0) throw new Unprocessable(`the style names images that are ${where}: ${missing.join(', ')}`);
    return used;
  }

  private qmlEntry(names: string[]): string {
    const qmls = names.filter((entry) => entry.toLowerCase().endsWith('.qml'));
    if (qmls.length !== 1 || qmls[0] === undefined) {
      throw new BadRequest(`a style package holds exactly one .qml file, this one ${qmls.length}`);
    }
    return qmls[0];
  }

  /** The folder of the project file, against which QGIS resolves relative paths; none for a database project. */
  private async projectDir(ref: ProjectRef): Promise<string | undefined> {
    const file = await this.repository.store.mapParameter(ref);
    return isAbsolute(file) ? dirname(file) : undefined;
  }

  /**
   * Stores the style, then removes the images of its folder that nothing names any more: those of
   * the package it replaced, or those just kept when the project's write failed.
   */
  private async store(ref: ProjectRef, name: string, qml: string, options: StoreOptions): Promise<boolean> {
    try {
      return await this.styles.putQml(ref, name, qml, options);
    } finally {
      await this.styles.pruneImages(ref);
    }
  }

  /** The fonts the style uses that no instance of QGIS Server has. */
  private async fontWarnings(families: string[]): Promise<string[]> {
    if (families.length === 0) return [];
    const absences = fontAbsences(await this.fonts.hosts(families), families);
    return absences.filter((absence) => absence.nowhere).map((absence) => absence.message);
  }
}
