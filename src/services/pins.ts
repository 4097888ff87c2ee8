/**
 * Pinned projects: those every QGIS Server instance loads as soon as it connects. A pin is stored
 * with its project (ProjectStore), so every Steward process on the same folder or database sees
 * it; the projects STEWARD_PINNED_PROJECTS names are pinned by this process's configuration
 * besides, as long as they exist, and cannot be unpinned over the API.
 */
import { Conflict } from '../errors.js';
import { projectKey, type ProjectRef } from '../storage/project-store.js';
import { projectNotFound, type ProjectRepository } from './repository.js';

export type PinSource = 'api' | 'environment';

/** A pinned project, with the MAP value the instances list it under in their cache. */
export interface Pin {
  project: string;
  schema: string;
  map: string;
  source: PinSource;
}

export class ProjectPins {
  private readonly configuredKeys: Set<string>;

  constructor(
    private readonly repository: ProjectRepository,
    private readonly configured: readonly ProjectRef[],
  ) {
    this.configuredKeys = new Set(configured.map(projectKey));
  }

  /** The pinned projects that exist, of every schema. */
  async list(): Promise<Pin[]> {
    const store = this.repository.store;
    const stored = await store.pinned();
    const keys = new Set(stored.map(projectKey));
    const configured: ProjectRef[] = [];
    for (const ref of this.configured) {
      if (!keys.has(projectKey(ref)) && (await this.repository.exists(ref))) configured.push(ref);
    }
    return Promise.all(
      [...stored, ...configured].map(async (ref) => ({
        project: ref.name,
        schema: ref.schema,
        map: await store.mapParameter(ref),
        source: this.configuredKeys.has(projectKey(ref)) ? ('environment' as const) : ('api' as const),
      })),
    );
  }

  async has(ref: ProjectRef): Promise<boolean> {
    return this.configuredKeys.has(projectKey(ref)) || this.repository.store.isPinned(ref);
  }

  /** Pins or unpins an existing project, under its lock; a configured pin cannot be taken away. */
  async set(ref: ProjectRef, pinned: boolean): Promise<void> {
    if (!pinned && this.configuredKeys.has(projectKey(ref))) {
      throw new Conflict(`project "${ref.name}" is pinned by STEWARD_PINNED_PROJECTS; remove it there`, {
        code: 'project_pinned',
      });
    }
    const store = this.repository.store;
    await store.withLock(ref, async () => {
      if (!(await this.repository.exists(ref))) throw projectNotFound(ref);
      await store.setPinned(ref, pinned);
    });
  }
}
