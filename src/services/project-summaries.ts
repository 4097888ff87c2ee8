/**
 * The projects of a schema as one listing shows them: a summary of each (its title, storage,
 * layers, CRS, author and pin), searched, sorted and cut into pages, so that a client needs one
 * request rather than two per project.
 */
import { type Access } from '../access/permissions.js';
import { type ProjectAccess } from '../access/records.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type ProjectPins } from './pins.js';
import { type ProjectRepository } from './repository.js';

export interface ProjectSummary {
  name: string;
  title: string;
  storage: 'filesystem' | 'postgresql';
  schema?: string;
  /** The layers one may see; undefined for a project that cannot be read. */
  layers?: number;
  crs: string;
  author: string;
  pinned: boolean;
  /** What the identity that asked may do with the project. */
  access: ProjectAccess;
  /** Why the project cannot be read; the other fields are then empty. */
  error?: string;
}

export type SummarySort = 'name' | 'layers' | 'author';

export interface SummaryQuery {
  schema: string;
  /** Kept when its name or title holds this, whatever the case. */
  q?: string;
  sort: SummarySort;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** What an identity may do with each project ('none': not listed), and the layers of each it may see. */
export interface SummaryAccess {
  project(ref: ProjectRef): Access;
  layer(ref: ProjectRef, layer: string): boolean;
}

export interface SummaryPage {
  /** The projects that match, over every page. */
  total: number;
  offset: number;
  limit: number;
  projects: ProjectSummary[];
}

/** Projects read at once: a schema of thousands must not open thousands of reads together. */
const READS_AT_ONCE = 16;

/** A project the identity may read, with what it may do with it. */
interface Granted {
  ref: ProjectRef;
  access: ProjectAccess;
}

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

const COMPARE: Record<SummarySort, (a: ProjectSummary, b: ProjectSummary) => number> = {
  name: (a, b) => collator.compare(a.name, b.name),
  // A project that cannot be read counts below an empty one.
  layers: (a, b) => (a.layers ?? -1) - (b.layers ?? -1),
  author: (a, b) => collator.compare(a.author, b.author),
};

function matches(summary: ProjectSummary, q: string | undefined): boolean {
  if (q === undefined || q === '') return true;
  const wanted = q.toLocaleLowerCase();
  return summary.name.toLocaleLowerCase().includes(wanted) || summary.title.toLocaleLowerCase().includes(wanted);
}

export class ProjectSummaries {
  constructor(
    private readonly repository: ProjectRepository,
    private readonly pins: ProjectPins,
  ) {}

  /** One project's summary; one that cannot be read has its error instead of failing the listing. */
  private async summary({ ref, access: granted }: Granted, access: SummaryAccess): Promise<ProjectSummary> {
    const storage = this.repository.store.kind;
    const where = {
      name: ref.name,
      storage,
      ...(storage === 'postgresql' ? { schema: ref.schema } : {}),
      access: granted,
    };
    try {
      const document = await this.repository.read(ref);
      const metadata = document.metadata();
      const layers = document.layers().filter((layer) => access.layer(ref, layer.name)).length;
      const pinned = await this.pins.has(ref);
      return { ...where, title: metadata.title, layers, crs: metadata.authid, author: metadata.author, pinned };
    } catch (error) {
      return { ...where, title: '', crs: '', author: '', pinned: false, error: (error as Error).message };
    }
  }

  async page(query: SummaryQuery, access: SummaryAccess): Promise<SummaryPage> {
    const names = await this.repository.store.list(query.schema);
    const granted = names.flatMap((name): Granted[] => {
      const ref = { name, schema: query.schema };
      const level = access.project(ref);
      return level === 'none' ? [] : [{ ref, access: level }];
    });
    const direction = query.order === 'desc' ? -1 : 1;
    const { offset, limit } = query;
    if (query.sort === 'name' && !query.q) {
      // Ordered by name alone: only the projects of the page are read, however many the schema holds.
      granted.sort((a, b) => direction * collator.compare(a.ref.name, b.ref.name));
      const projects = await this.summaries(granted.slice(offset, offset + limit), access);
      return { total: granted.length, offset, limit, projects };
    }
    const compare = COMPARE[query.sort];
    const found = (await this.summaries(granted, access))
      .filter((summary) => matches(summary, query.q))
      .sort((a, b) => direction * (compare(a, b) || COMPARE.name(a, b)));
    return { total: found.length, offset, limit, projects: found.slice(offset, offset + limit) };
  }

  private async summaries(granted: Granted[], access: SummaryAccess): Promise<ProjectSummary[]> {
    const summaries: ProjectSummary[] = [];
    for (let start = 0; start < granted.length; start += READS_AT_ONCE) {
      const batch = granted.slice(start, start + READS_AT_ONCE);
      summaries.push(...(await Promise.all(batch.map((project) => this.summary(project, access)))));
    }
    return summaries;
  }
}
