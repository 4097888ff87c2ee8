import { createHash } from 'node:crypto';

import { NotFound } from '../errors.js';
import { ProjectDocument } from '../qgis/project.js';
import { projectKey, type ProjectRef, type ProjectStore, storedText } from '../storage/project-store.js';
import { estimatedBytes, LruCache } from './project-cache.js';

/** The parsed projects kept when no bound is given. */
export const DEFAULT_PROJECT_CACHE_BYTES = 128 * 1024 * 1024;

export interface RepositoryOptions {
  /** Estimated bytes of parsed projects kept, the least recently read dropped first. */
  cacheBytes?: number;
  /** Called after each write of `update()` and each removal, outside the project's lock; awaited by them. */
  onChanged?: (ref: ProjectRef) => Promise<void>;
}

/** Digests the bytes rather than the text: a large project is then neither decoded nor encoded again to be compared. */
function digestOf(content: Uint8Array): string {
  return createHash('sha1').update(content).digest('hex');
}

interface CachedProject {
  identity: string;
  /** Digest of the bytes the document was parsed from or written as. */
  digest: string;
  document: ProjectDocument;
  /** Estimated memory of the document. */
  bytes: number;
}

function cacheEntry(
  identity: string,
  content: Uint8Array,
  document: ProjectDocument,
  digest = digestOf(content),
): CachedProject {
  return { identity, digest, document, bytes: estimatedBytes(content.byteLength) };
}

/**
 * Reads and writes projects as documents. Parsed projects are cached by the stored project's
 * identity, so reads do not parse again until the project changes (here or in another process);
 * the cache is bounded by the estimated memory of its documents, and the projects read least
 * recently are dropped first (a later read parses them again).
 */
export class ProjectRepository {
  private readonly cache: LruCache<CachedProject>;

  constructor(
    readonly store: ProjectStore,
    private readonly options: RepositoryOptions = {},
  ) {
    this.cache = new LruCache(options.cacheBytes ?? DEFAULT_PROJECT_CACHE_BYTES);
  }

  /** The parsed project; throws NotFound when there is none. */
  async read(ref: ProjectRef): Promise<ProjectDocument> {
    const identity = await this.store.identity(ref);
    const cached = this.cache.get(projectKey(ref));
    if (identity !== undefined && cached?.identity === identity) return cached.document;
    return this.load(ref);
  }

  /** Reads the stored project; it is decoded and parsed again only when it differs from the cached one. */
  private async load(ref: ProjectRef): Promise<ProjectDocument> {
    const stored = await this.store.read(ref);
    if (!stored) {
      this.cache.delete(projectKey(ref));
      throw new NotFound(
        `project "${ref.name}" does not exist${ref.schema === 'public' ? '' : ` in schema "${ref.schema}"`}`,
      );
    }
    const digest = digestOf(stored.content);
    const previous = this.cache.peek(projectKey(ref));
    const document = previous?.digest === digest ? previous.document : ProjectDocument.parse(storedText(stored));
    this.cache.set(projectKey(ref), cacheEntry(stored.identity, stored.content, document, digest));
    return document;
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
   * atomically. When `change` or the write fails, the stored project is left as it was. After a
   * write, and once the lock is released, the `onChanged` listener is awaited.
   */
  async update<T>(ref: ProjectRef, change: (document: ProjectDocument) => T | Promise<T>): Promise<T> {
    const changed = await this.store.withLock(ref, async () => {
      // The stored text, not its identity, tells whether the cached document is current: another
      // process's write of equal size, on a reused inode within one timestamp tick (or behind an
      // NFS attribute cache), leaves the file's identity as it was, and its change would be lost.
      const document = await this.load(ref);
      try {
        const result = await change(document);
        const content = document.encode();
        const identity = await this.store.write(ref, content);
        this.cache.set(projectKey(ref), cacheEntry(identity, content, document));
        return result;
      } catch (error) {
        this.cache.delete(projectKey(ref));
        throw error;
      }
    });
    await this.options.onChanged?.(ref);
    return changed;
  }

  async create(ref: ProjectRef, document: ProjectDocument): Promise<void> {
    await this.store.withLock(ref, () => this.store.create(ref, document.serialize()));
  }

  async remove(ref: ProjectRef): Promise<boolean> {
    const removed = await this.store.withLock(ref, async () => {
      this.cache.delete(projectKey(ref));
      return this.store.remove(ref);
    });
    if (removed) await this.options.onChanged?.(ref);
    return removed;
  }
}
