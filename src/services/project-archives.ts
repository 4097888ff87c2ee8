/**
 * Projects in and out as QGIS Desktop has them: a `.qgz` (or `.qgs`), or a bundle, a zip of the
 * project and the data files it reads. A published bundle's data files go to the project's folder
 * of the upload root, in a revision folder of their own, and the layers' datasources (and their
 * styles' files) are pointed there, relative to the project as QGIS writes them; the project is
 * checked before it is stored and replaces the stored one in one write, so that readers and QGIS
 * Server see the old project with its files or the new one with its own (docs/publishing.md).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, posix, relative } from 'node:path';
import { Readable } from 'node:stream';

import { Conflict, DocumentFormatError, PreconditionFailed, Unprocessable } from '../errors.js';
import { datasetFiles } from '../gdal/dataset-files.js';
import { type LayerCheck, type ProjectCheck, type ProjectChecker } from '../insight/checks.js';
import {
  FILE_PROVIDERS,
  isProjectRelative,
  joinFileDatasource,
  relativeToProject,
  saveRelativePaths,
  savesAbsolutePaths,
  splitFileDatasource,
} from '../qgis/file-datasource.js';
import { ProjectDocument } from '../qgis/project.js';
import { rewriteStyleFiles } from '../qgis/style-references.js';
import { firstChild, setText } from '../qgis/xml/node.js';
import { ProjectArchive } from '../storage/project-archive.js';
import { type ProjectRef } from '../storage/project-store.js';
import { limitedChunks, receiptError } from '../storage/received-file.js';
import { removeStaged, StagedFolder } from '../storage/staged-folder.js';
import { type ZipLimits } from '../storage/zip-entries.js';
import { streamedZip } from '../storage/zip-writer.js';
import { packagedEntry } from './bundle-entries.js';
import { type DataRoots } from './data-roots.js';
import { type LayerService } from './layers.js';
import { type ProjectLifecycle } from './projects.js';
import { projectNotFound, type ProjectRepository } from './repository.js';
import { newRevision, type UploadFolders } from './revision-folders.js';
import { type HandedOverBody, receiveOnThread } from './threaded-receipt.js';
import { projectFolder, type Received, receiveUpload } from './upload-receipt.js';

export interface ArchiveDownload {
  /** The archive: a .qgz whole, a bundle read from the disk as it is sent. */
  body: Buffer | Readable;
  length: number;
  /** The stored project's entity tag, for `If-Match` on a later upload. */
  etag: string;
  filename: string;
}

export interface PublishOptions {
  /** Replace a stored project of that name. */
  replace: boolean;
  /** The `If-Match` header: the stored project is replaced only while it is this version. */
  ifMatch?: string | undefined;
  /** Store the project even when layers are broken. */
  allowBroken: boolean;
}

export interface PublishAnswer {
  created: boolean;
  etag: string;
  /** Where the bundle's data files now are, when it had any. */
  data_dir?: string;
  /** The bundle's entries written there, by their path in the bundle. */
  data_files: string[];
  /** The project as `GET .../check` checks it once stored. */
  check: ProjectCheck;
}

/** The upload, opened: the project, its folder in the bundle, and the data files beside it in the bundle. */
interface Upload {
  document: ProjectDocument;
  /** The folder of the project file in the bundle, `.` at its root. */
  folder: string;
  /** The bundle's data files, by their path in it. */
  data: Set<string>;
  /** The revision folder the data files were written to, when there are any. */
  dataDir?: string;
}

/** Most entries a bundle may hold. */
const MAX_ENTRIES = 10_000;
/** A bundle may unpack to this many times the bytes an upload may have. */
const UNPACKED_FACTOR = 4;

/** The entity tag of a stored project's identity. */
export function projectEtag(identity: string): string {
  return `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`;
}

/** The project's text, 422 with the reason when it is not a project QGIS writes. */
function parseProject(text: string, file: string): ProjectDocument {
  try {
    return ProjectDocument.parse(text);
  } catch (error) {
    if (error instanceof DocumentFormatError) throw new Unprocessable(`${file} cannot be read: ${error.message}`);
    throw error;
  }
}

function projectText(bytes: Uint8Array): string {
  return new TextDecoder('utf-8').decode(bytes);
}

/** The upload received, its project read: 422 unless QGIS reads it. */
function opened(received: Received): Upload {
  const { file, bytes } = received;
  const content = file?.toLowerCase().endsWith('.qgz') === true ? ProjectArchive.open(bytes).content : bytes;
  const document = parseProject(projectText(content), file ?? 'the project');
  return { document, folder: projectFolder(received), data: new Set(received.names) };
}

/** An upload whose revision another publish of the project removed before it was stored. */
function revisionGone(ref: ProjectRef): Conflict {
  return new Conflict(
    `another publish of project "${ref.name}" replaced it while this upload was checked, removing its data files; upload it again`,
  );
}

function brokenMessage(broken: LayerCheck[]): string {
  const named = broken.map((layer) => `"${layer.name}" (${layer.findings.map((f) => f.message).join('; ')})`);
  return `the project's layers ${named.join(', ')} are broken; publish it anyway with ?allow_broken=true`;
}

export class ProjectArchives {
  private readonly limits: ZipLimits;

  constructor(
    private readonly options: {
      repository: ProjectRepository;
      layers: LayerService;
      checker: ProjectChecker;
      dataRoots: DataRoots;
      /** Where data files go; without a root, bundles with data files are refused. */
      uploads: UploadFolders;
      /** Bytes an upload may have. */
      bodyLimit: number;
      lifecycle?: ProjectLifecycle | undefined;
    },
  ) {
    this.limits = { entries: MAX_ENTRIES, bytes: UNPACKED_FACTOR * options.bodyLimit };
  }

  private get repository(): ProjectRepository {
    return this.options.repository;
  }

  /** The stored project's entity tag; NotFound when there is none. */
  async etag(ref: ProjectRef): Promise<string> {
    const identity = await this.repository.store.identity(ref);
    if (identity === undefined) throw projectNotFound(ref);
    return projectEtag(identity);
  }

  /**
   * The project as a `.qgz`, or with `withData` a zip of the project (`<name>.qgs`) and the files
   * of its layers that lie in the data roots, under `data/`, its datasources made relative to them.
   */
  async download(ref: ProjectRef, withData: boolean): Promise<ArchiveDownload> {
    const etag = await this.etag(ref);
    const copy = ProjectDocument.parse((await this.repository.read(ref)).serialize());
    if (!withData) {
      // Outside the project's folder, paths relative to it lead nowhere: the .qgz names the server's files.
      this.pointLayers(copy, await this.absoluteSources(ref, copy));
      const bytes = await ProjectArchive.create(ref.name, copy.serialize()).bytes();
      return { body: bytes, length: bytes.length, etag, filename: `${ref.name}.qgz` };
    }
    const { sources, files } = await this.bundledFiles(ref, copy);
    if (this.pointLayers(copy, sources)) saveRelativePaths(copy.root);
    const streamed = await Promise.all(
      [...files].map(async ([name, path]) => ({ name, path, size: (await stat(path)).size })),
    );
    const bundle = await streamedZip([`${ref.name}.qgs`, Buffer.from(copy.serialize(), 'utf8')], streamed);
    return { body: bundle.stream, length: bundle.length, etag, filename: `${ref.name}.zip` };
  }

  /** Gives each layer `paths` names by id that path in its datasource and tree record; whether any changed. */
  private pointLayers(document: ProjectDocument, paths: ReadonlyMap<string, string>): boolean {
    const datasources = new Map<string, string>();
    document.rewriteLayers((element, entry) => {
      const path = paths.get(entry.id);
      const holder = firstChild(element, 'datasource');
      if (path === undefined || !holder) return false;
      datasources.set(entry.id, joinFileDatasource({ ...splitFileDatasource(entry.datasource), path }));
      setText(holder, datasources.get(entry.id) ?? '');
      return true;
    });
    document.setTreeSources(datasources);
    return datasources.size > 0;
  }

  /** The absolute path of each file layer whose datasource is relative to the project, by id. */
  private async absoluteSources(ref: ProjectRef, document: ProjectDocument): Promise<Map<string, string>> {
    const paths = new Map<string, string>();
    for (const entry of document.layers()) {
      if (!FILE_PROVIDERS.has(entry.provider) || !isProjectRelative(splitFileDatasource(entry.datasource).path))
        continue;
      const source = await this.options.layers.gdalSource(ref, entry);
      if (source?.kind === 'file' && isAbsolute(source.gdalPath)) paths.set(entry.id, source.gdalPath);
    }
    return paths;
  }

  /**
   * The files of the layers GDAL reads from the data roots, by their name in the bundle
   * (`data/<folder>/<file>`), and each such layer's path there as QGIS reads it (`./data/...`).
   */
  private async bundledFiles(
    ref: ProjectRef,
    document: ProjectDocument,
  ): Promise<{ sources: Map<string, string>; files: Map<string, string> }> {
    const sources = new Map<string, string>();
    const files = new Map<string, string>();
    const folders = new Map<string, string>();
    for (const entry of document.layers()) {
      if (!FILE_PROVIDERS.has(entry.provider)) continue;
      const source = await this.options.layers.gdalSource(ref, entry);
      if (!source || source.kind !== 'file' || !isAbsolute(source.gdalPath)) continue;
      const confined = await this.options.layers.confineSource(ref, entry).then(
        () => true,
        () => false,
      );
      const listed = confined ? await datasetFiles(source.gdalPath) : undefined;
      if (!listed) continue;
      const inside = await Promise.all(listed.map((file) => this.options.dataRoots.isInside(file)));
      if (inside.some((ok) => !ok)) continue;
      const dir = dirname(source.gdalPath);
      let folder = folders.get(dir);
      if (folder === undefined) {
        const base = `data/${basename(dir) || 'root'}`;
        folder = base;
        for (let n = 2; [...folders.values()].includes(folder); n++) folder = `${base}-${n}`;
        folders.set(dir, folder);
      }
      for (const file of listed) {
        const rest = relative(dir, file);
        const name = `${folder}/${rest.startsWith('..') || isAbsolute(rest) ? basename(file) : rest}`;
        files.set(name, file);
        if (file === source.gdalPath) sources.set(entry.id, `./${name}`);
      }
    }
    return { sources, files };
  }

  /**
   * Stores an uploaded `.qgs`, `.qgz` or bundle as project `ref` (see the module's comment):
   * Conflict when it exists and neither `replace` nor `ifMatch` is given, PreconditionFailed when
   * `ifMatch` is not its version, Unprocessable naming the broken layers unless `allowBroken`.
   * Nothing is left behind on failure. A body left on its socket is read on a thread of its own.
   */
  async publish(ref: ProjectRef, body: Readable | HandedOverBody, options: PublishOptions): Promise<PublishAnswer> {
    const allow = (identity: string | undefined): void => this.precondition(ref, identity, options);
    allow(await this.repository.store.identity(ref));
    return this.publishReceived(ref, await this.receive(ref, body), allow, options);
  }

  /**
   * Reads the upload as it arrives (upload-receipt.ts), the data files written straight into a
   * hidden folder of the project's in the upload root, which becomes a revision folder once every
   * file is whole and flushed and the project is read. Nothing stays when anything fails.
   */
  private async receive(ref: ProjectRef, body: Readable | HandedOverBody): Promise<Upload> {
    const staging = new StagedFolder(() => this.options.uploads.folderOf(ref));
    try {
      const upload = opened(await this.received(ref, body, staging));
      if (upload.data.size === 0) {
        await staging.discard();
        return upload;
      }
      return { ...upload, dataDir: await staging.keep(newRevision()) };
    } catch (error) {
      await staging.discard();
      throw error;
    }
  }

  /** The upload read from `body`, its data files in `staging`: on a thread of its own when left on its socket. */
  private async received(ref: ProjectRef, body: Readable | HandedOverBody, staging: StagedFolder): Promise<Received> {
    const where = (): string => staging.where() ?? this.options.uploads.root ?? tmpdir();
    if (!(body instanceof Readable)) {
      const folder = (): string => this.options.uploads.folderOf(ref);
      const received = await receiveOnThread(body, {
        limits: this.limits,
        staging: staging.name,
        folder,
        where: where(),
      });
      staging.adopt(received.names);
      return received;
    }
    try {
      return await receiveUpload(limitedChunks(body, this.options.bodyLimit), staging, this.limits);
    } catch (error) {
      throw await receiptError(error, where());
    }
  }

  private async publishReceived(
    ref: ProjectRef,
    upload: Upload,
    allow: (identity: string | undefined) => void,
    options: PublishOptions,
  ): Promise<PublishAnswer> {
    const { dataDir } = upload;
    let created: boolean;
    try {
      if (dataDir !== undefined) await this.relocate(ref, upload, dataDir);
      const layers = await this.options.checker.checkLayers(ref, upload.document);
      const broken = layers.filter((layer) => layer.status === 'broken');
      if (broken.length > 0 && !options.allowBroken)
        throw new Unprocessable(brokenMessage(broken), { code: 'broken_layers' });
      const stored = (identity: string | undefined): void => {
        allow(identity);
        if (dataDir !== undefined && !existsSync(dataDir)) throw revisionGone(ref);
      };
      created = await this.repository.put(ref, upload.document, stored, 'published the project from an upload');
    } catch (error) {
      if (dataDir !== undefined) await removeStaged(dataDir);
      throw error;
    }
    if (created) await this.options.lifecycle?.projectCreated?.(ref);
    // The project's earlier revisions nothing names any more go (revision-folders.ts).
    await this.options.uploads.removeUnused(ref, dataDir === undefined ? undefined : basename(dataDir));
    const check = await this.options.checker.check(ref);
    return {
      created,
      etag: await this.etag(ref),
      ...(dataDir !== undefined && { data_dir: dataDir }),
      data_files: [...upload.data],
      check,
    };
  }

  private precondition(ref: ProjectRef, identity: string | undefined, options: PublishOptions): void {
    const { ifMatch } = options;
    if (ifMatch !== undefined) {
      const tags = ifMatch.split(',').map((tag) => tag.trim());
      const holds = identity !== undefined && (tags.includes('*') || tags.includes(projectEtag(identity)));
      if (!holds)
        throw new PreconditionFailed(
          identity === undefined
            ? `project "${ref.name}" does not exist, so If-Match does not hold`
            : `project "${ref.name}" changed since the version If-Match names (now ${projectEtag(identity)})`,
        );
      return;
    }
    if (identity !== undefined && !options.replace)
      throw new Conflict(`project "${ref.name}" exists: replace it with ?replace=true or If-Match: <its ETag>`, {
        code: 'name_taken',
      });
  }

  /**
   * Points the layers whose files the bundle holds, and the files their styles draw with, at the
   * files in `dataDir`: relative to the stored project's folder unless it saves absolute paths or
   * has no folder (a project in PostgreSQL).
   */
  private async relocate(ref: ProjectRef, upload: Upload, dataDir: string): Promise<void> {
    const { document, folder, data } = upload;
    const projectFile = await this.repository.store.mapParameter(ref);
    const projectDir = isAbsolute(projectFile) && !savesAbsolutePaths(document.root) ? dirname(projectFile) : undefined;
    const names = [...data];
    const located = (path: string): string | undefined => {
      const entry = isProjectRelative(path)
        ? posix.normalize(posix.join(folder, path))
        : /^(\/|[A-Za-z]:[\\/]|file:)/.test(path)
          ? packagedEntry(path, names)
          : undefined;
      if (entry === undefined || !data.has(entry)) return undefined;
      const written = join(dataDir, ...entry.split('/'));
      return projectDir === undefined ? written : relativeToProject(projectDir, written);
    };
    const datasources = new Map<string, string>();
    document.rewriteLayers((element, entry) => {
      let changed = false;
      const holder = firstChild(element, 'datasource');
      if (FILE_PROVIDERS.has(entry.provider) && holder) {
        const source = splitFileDatasource(entry.datasource);
        const path = located(source.path);
        if (path !== undefined) {
          datasources.set(entry.id, joinFileDatasource({ ...source, path }));
          setText(holder, datasources.get(entry.id) ?? '');
          changed = true;
        }
      }
      rewriteStyleFiles(element, (file) => {
        const path = located(file);
        if (path !== undefined) changed = true;
        return path;
      });
      return changed;
    });
    document.setTreeSources(datasources);
  }
}
