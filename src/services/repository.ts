import { NotFound } from '../errors.js';
import { type LayerEntry, ProjectDocument } from '../qgis/project.js';
import {
  contentBytes,
  type ProjectContent,
  projectKey,
  type ProjectRef,
  type ProjectStore,
  storedText,
} from '../storage/project-store.js';
import { type StyleChange } from '../storage/style-store.js';
import { estimatedBytes, LruCache } from './project-cache.js';
import { type KeptVersion } from './recent-versions.js';
import { type VersionRecorder } from './version-recorder.js';

/** The parsed projects kept when no bound is given. */
export const DEFAULT_PROJECT_CACHE_BYTES = 128 * 1024 * 1024;

export interface RepositoryOptions {
  /** Estimated bytes of parsed projects kept, the least recently read dropped first. */
  cacheBytes?: number;
  /** Called after each write of `update()` and each removal, outside the project's lock; awaited by them. */
  onChanged?: (ref: ProjectRef) => Promise<void>;
  /** Records every write as a version of the project; none are kept without it. */
  history?: VersionRecorder;
}

/** The one-line summary of a write's version, or how to tell it from what the change answered. */
export type Summary<T> = string | ((result: T) => string);

function summaryOf<T>(summary: Summary<T>, result: T): string {
  return typeof summary === 'string' ? summary : summary(result);
}

interface CachedProject {
  identity: string;
  document: ProjectDocument;
  /** Estimated memory of the document. */
  bytes: number;
}

function cacheEntry(identity: string, content: ProjectContent, document: ProjectDocument): CachedProject {
  return { identity, document, bytes: estimatedBytes(contentBytes(content)) };
}

/**
 * Reads and writes projects as documents. Parsed projects are cached by the stored project's
 * identity, so reads do not parse again until the project changes (here or in another process);
 * the cache is bounded by the estimated memory of its documents, and the projects read least
 * recently are dropped first (a later read parses them again).
 */
/**
 * The error for a project that is not stored, naming its schema unless it is `public`, and the
 * project files of its name that lie outside the layout Steward serves projects from.
 */
export function projectNotFound(ref: ProjectRef, strayFiles: readonly string[] = []): NotFound {
  const where = ref.schema === 'public' ? '' : ` in schema "${ref.schema}"`;
  if (strayFiles.length === 0)
    return new NotFound(`project "${ref.name}" does not exist${where}`, { code: 'project_not_found' });
  return new NotFound(
    `project "${ref.name}" does not exist: Steward serves a project from ${ref.name}/${ref.name}.qgs ` +
      `(or .qgz) in the projects folder, and ${strayFiles.join(', ')} lies outside that layout ` +
      `(move it there to serve it)`,
    { code: 'project_not_found' },
  );
}

export class ProjectRepository {
  private readonly cache: LruCache<CachedProject>;
  /** Keys of the projects this process is replacing in their store now. */
  private readonly beingWritten = new Set<string>();

  constructor(
    readonly store: ProjectStore,
    private readonly options: RepositoryOptions = {},
  ) {
    this.cache = new LruCache(options.cacheBytes ?? DEFAULT_PROJECT_CACHE_BYTES);
  }

  /**
   * The parsed project; throws NotFound when there is none. While this process writes the project,
   * its document, already changed, is the project: readers do not parse the file being replaced.
   */
  read(ref: ProjectRef): Promise<ProjectDocument> {
    // A store that tells the identity at once (the filesystem) leaves a read of a cached project no wait.
    if (!this.store.identityNow) return this.current(ref, true);
    return Promise.resolve(this.cached(ref, this.store.identityNow(ref), true) ?? this.load(ref));
  }

  /** The cached document when still current, by the identity the store tells; otherwise the project parsed anew. */
  private async current(ref: ProjectRef, forReaders: boolean): Promise<ProjectDocument> {
    return (await this.currentWithIdentity(ref, forReaders)).document;
  }

  private async currentWithIdentity(
    ref: ProjectRef,
    forReaders: boolean,
  ): Promise<{ document: ProjectDocument; identity: string | undefined }> {
    const identity = await this.store.identity(ref);
    const document = this.cached(ref, identity, forReaders) ?? (await this.load(ref));
    return { document, identity: this.cache.peek(projectKey(ref))?.identity ?? identity };
  }

  /** The cached document when the stored project, now of `identity`, is the one it was parsed from or written as. */
  private cached(ref: ProjectRef, identity: string | undefined, forReaders: boolean): ProjectDocument | undefined {
    const key = projectKey(ref);
    const cached = this.cache.get(key);
    if (identity === undefined || !cached) return undefined;
    return cached.identity === identity || (forReaders && this.beingWritten.has(key)) ? cached.document : undefined;
  }

  /** Reads and parses the stored project. */
  private async load(ref: ProjectRef): Promise<ProjectDocument> {
    const stored = await this.store.read(ref);
    if (!stored) {
      this.cache.delete(projectKey(ref));
      throw projectNotFound(ref, (await this.store.strayFiles?.(ref)) ?? []);
    }
    const document = ProjectDocument.parse(storedText(stored));
    this.cache.set(projectKey(ref), cacheEntry(stored.identity, stored.content, document));
    return document;
  }

  /** Whether writes are recorded as versions. */
  get keepsVersions(): boolean {
    return this.options.history !== undefined;
  }

  /** Version `id` (of `identity`) as its write knew it, when this process recorded it lately (VersionRecorder.kept). */
  keptVersion(ref: ProjectRef, id: number, identity: string): KeptVersion | undefined {
    return this.options.history?.kept(ref, id, identity);
  }

  /** The identity the project had when this process last read or wrote it; the store is not asked. */
  lastSeenIdentity(ref: ProjectRef): string | undefined {
    return this.cache.peek(projectKey(ref))?.identity;
  }

  async exists(ref: ProjectRef): Promise<boolean> {
    return (await this.store.identity(ref)) !== undefined;
  }

  /**
   * Changes a project under its lock: `change` edits the document, which is then written back
   * atomically, with `styles` stored and removed as the store writes them with a project, and
   * recorded as a version told by `summary`. When `change` or the write fails, the stored project
   * is left as it was. After a write, and once the lock is released, the `onChanged` listener is awaited.
   */
  async update<T>(
    ref: ProjectRef,
    change: (document: ProjectDocument) => T | Promise<T>,
    styles: readonly StyleChange[] = [],
    summary: Summary<T> = 'changed the project',
  ): Promise<T> {
    const changed = await this.store.withLock(ref, async () => {
      // Under the lock the identity tells whether the cached document is current: the stores give
      // every write a new one (FilesystemStore: nextModified; PostgresStore: the row's xmin).
      const { document, identity } = await this.currentWithIdentity(ref, false);
      await this.baseline(ref, identity);
      return this.writeDocument(ref, document, async () => {
        const result = await change(document);
        const content = document.encode();
        return { result, content, styles, summary: summaryOf(summary, result) };
      });
    });
    await this.options.onChanged?.(ref);
    return changed;
  }

  /** Every layer of `document` for its version to keep, when versions are kept. */
  private layersOf(document: ProjectDocument | undefined): readonly LayerEntry[] | undefined {
    return this.options.history && document?.everyLayer();
  }

  /** Records the stored project, of `identity`, as a version when its newest version is not it (VersionRecorder.baseline). */
  private async baseline(ref: ProjectRef, identity: string | undefined): Promise<void> {
    await this.options.history?.baseline(ref, identity, async () => (await this.store.read(ref))?.content);
  }

  /**
   * Writes the document `write` makes (holding the lock) with its styles, records the version
   * (`whole`: not made from the newest version's pieces; `layers`: every layer, when there is no
   * document to tell them) and caches the document (none: the next read parses the project); the
   * stored project is left as it was when `write` or the store fails.
   */
  private async writeDocument<T>(
    ref: ProjectRef,
    document: ProjectDocument | undefined,
    write: () => Promise<{
      result: T;
      content: readonly Uint8Array[];
      styles: readonly StyleChange[];
      summary: string;
    }>,
    whole = false,
    layers?: readonly LayerEntry[],
  ): Promise<T> {
    const key = projectKey(ref);
    try {
      const { result, content, styles, summary } = await write();
      const written = { pieces: content, summary, styles, whole, layers: layers ?? this.layersOf(document) };
      this.beingWritten.add(key);
      const prepare = () => this.options.history?.prepare(ref, written);
      const identity = await this.store.write(ref, content, styles, prepare);
      if (document) this.cache.set(key, cacheEntry(identity, content, document));
      else this.cache.delete(key);
      await this.options.history?.record(ref, { ...written, identity });
      return result;
    } catch (error) {
      this.cache.delete(key);
      throw error;
    } finally {
      this.beingWritten.delete(key);
    }
  }

  /**
   * Stores and removes styles without changing the project, under its lock, as a version told by
   * `summary`; `check` runs first, under the lock, and refuses the change (throwing) or skips it
   * (false). Answers whether the styles were changed.
   */
  async changeStyles(
    ref: ProjectRef,
    styles: readonly StyleChange[],
    summary: string,
    check: () => Promise<boolean>,
  ): Promise<boolean> {
    return this.store.withLock(ref, async () => {
      const { document, identity } = await this.currentWithIdentity(ref, false);
      if (!(await check())) return false;
      await this.baseline(ref, identity);
      await this.store.styles.apply(ref, styles);
      if (identity !== undefined) {
        const layers = this.layersOf(document);
        await this.options.history?.record(ref, { pieces: document.encode(), identity, summary, styles, layers });
      }
      return true;
    });
  }

  /**
   * Replaces the project with `content` (a version's XML in pieces, of `layers`) and its styles
   * with `styles`, as a new version told by `summary`. The content is not parsed: the next read
   * parses it.
   */
  async replace(
    ref: ProjectRef,
    content: readonly Uint8Array[],
    layers: readonly LayerEntry[],
    styles: ReadonlyMap<string, string>,
    summary: string,
  ): Promise<void> {
    await this.store.withLock(ref, async () => {
      const identity = await this.store.identity(ref);
      if (identity === undefined) throw projectNotFound(ref);
      await this.baseline(ref, identity);
      const changes = await this.styleChanges(ref, styles);
      await this.writeDocument(
        ref,
        undefined,
        async () => ({ result: undefined, content, styles: changes, summary }),
        false,
        layers,
      );
    });
    await this.options.onChanged?.(ref);
  }

  /** What makes the project's stored styles `styles`: those that differ, and those to remove. */
  private async styleChanges(ref: ProjectRef, styles: ReadonlyMap<string, string>): Promise<StyleChange[]> {
    const stored = await this.store.styles.names(ref);
    const changes: StyleChange[] = [];
    for (const name of stored) {
      const qml = styles.get(name);
      if (qml === undefined || qml !== (await this.store.styles.read(ref, name))) changes.push({ name, qml });
    }
    for (const [name, qml] of styles) if (!stored.includes(name)) changes.push({ name, qml });
    return changes;
  }

  async create(ref: ProjectRef, document: ProjectDocument): Promise<void> {
    await this.store.withLock(ref, () => this.createStored(ref, document, 'created the project'));
  }

  /** Stores a new project, holding its lock, and records it as its first version. */
  private async createStored(ref: ProjectRef, document: ProjectDocument, summary: string): Promise<void> {
    const text = document.serialize();
    await this.store.create(ref, text);
    const identity = await this.store.identity(ref);
    const pieces = [Buffer.from(text, 'utf8')];
    const layers = this.layersOf(document);
    if (identity !== undefined)
      await this.options.history?.record(ref, { pieces, identity, summary, styles: [], layers });
  }

  /**
   * Stores `document` as the project whole, creating it or replacing the stored one atomically,
   * under its lock, as a version told by `summary`: `allow` is given the stored project's identity
   * (undefined when there is none) and throws to refuse. Answers whether the project is new; the
   * `onChanged` listener is awaited as after `update`.
   */
  async put(
    ref: ProjectRef,
    document: ProjectDocument,
    allow: (identity: string | undefined) => void,
    summary: string,
  ): Promise<boolean> {
    const created = await this.store.withLock(ref, async () => {
      const identity = await this.store.identity(ref);
      allow(identity);
      if (identity === undefined) {
        this.cache.delete(projectKey(ref));
        await this.createStored(ref, document, summary);
        return true;
      }
      await this.baseline(ref, identity);
      const content = document.encode();
      await this.writeDocument(ref, document, async () => ({ result: undefined, content, styles: [], summary }), true);
      return false;
    });
    await this.options.onChanged?.(ref);
    return created;
  }

  async remove(ref: ProjectRef): Promise<boolean> {
    const removed = await this.store.withLock(ref, async () => {
      this.cache.delete(projectKey(ref));
      this.options.history?.forget(ref);
      return this.store.remove(ref);
    });
    if (removed) await this.options.onChanged?.(ref);
    return removed;
  }
}
