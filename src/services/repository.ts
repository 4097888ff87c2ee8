import { NotFound } from '../errors.js';
import { ProjectDocument } from '../qgis/project.js';
import { type ProjectRef, type ProjectStore } from '../storage/project-store.js';

export interface RepositoryOptions {
  /** Called after each successful write of `update()`, outside the project's lock; awaited by it. */
  onWritten?: (ref: ProjectRef) => Promise<void>;
}

function key(ref: ProjectRef): string {
  return `${ref.schema}\u0000${ref.name}`;
}

/**
 * Reads and writes projects as documents. Parsed projects are cached by the stored project's
 * identity, so reads do not parse again until the project changes (here or in another process).
 */
export class ProjectRepository {
  private readonly cache = new Map<string, { identity: string; document: ProjectDocument }>();

  constructor(
    readonly store: ProjectStore,
    private readonly options: RepositoryOptions = {},
  ) {}

  /** The parsed project; throws NotFound when there is none. */
  async read(ref: ProjectRef): Promise<ProjectDocument> {
    const identity = await this.store.identity(ref);
    const cached = this.cache.get(key(ref));
    if (identity !== undefined && cached?.identity === identity) return cached.document;
    const stored = await this.store.read(ref);
    if (!stored) {
      this.cache.delete(key(ref));
      throw new NotFound(`project "${ref.name}" does not exist${ref.schema === 'public' ? '' : ` in schema "${ref.schema}"`}`);
    }
    const document = ProjectDocument.parse(stored.text);
    this.cache.set(key(ref), { identity: stored.identity, document });
    return document;
  }

  async exists(ref: ProjectRef): Promise<boolean> {
    return (await this.store.identity(ref)) !== undefined;
  }

  /**
   * Changes a project under its lock: `change` edits the document, which is then written back
   * atomically. When `change` or the write fails, the stored project is left as it was. After a
   * write, and once the lock is released, the `onWritten` listener is awaited.
   */
  async update<T>(ref: ProjectRef, change: (document: ProjectDocument) => T | Promise<T>): Promise<T> {
    const changed = await this.store.withLock(ref, async () => {
      const document = await this.read(ref);
      try {
        const result = await change(document);
        const identity = await this.store.write(ref, document.serialize());
        this.cache.set(key(ref), { identity, document });
        return result;
      } catch (error) {
        this.cache.delete(key(ref));
        throw error;
      }
    });
    await this.options.onWritten?.(ref);
    return changed;
  }

  async create(ref: ProjectRef, document: ProjectDocument): Promise<void> {
    await this.store.withLock(ref, () => this.store.create(ref, document.serialize()));
  }

  async remove(ref: ProjectRef): Promise<boolean> {
    return this.store.withLock(ref, async () => {
      this.cache.delete(key(ref));
      return this.store.remove(ref);
    });
  }
}
