import { BadRequest, Forbidden } from '../errors.js';
import { type CrsResolver } from '../gdal/crs.js';
import { ProjectDocument } from '../qgis/project.js';
import { type ProjectRef } from '../storage/project-store.js';
import { localDateTime } from './local-time.js';
import { checkName, checkText } from './names.js';
import { type ProjectPins } from './pins.js';
import { type ProjectRepository } from './repository.js';
import { type UnlistedProject, unlistedProjects } from './unlisted-projects.js';

export const DEFAULT_SCHEMA = 'public';
export const DEFAULT_PROJECT_CRS = 'EPSG:3857';

export interface ProjectInfo {
  title: string;
  abstract: string;
  author: string;
  wms_title: string;
  wms_abstract: string;
  creation_datetime: string;
  crs: string;
  storage: 'filesystem' | 'postgresql';
  schema?: string;
  cache: 'mapproxy' | 'disabled';
  /** Whether every QGIS Server instance loads the project as soon as it connects. */
  pinned: boolean;
}

/** A change of a project's metadata; absent fields stay as they are. */
export interface MetadataRequest {
  title?: string;
  abstract?: string;
  author?: string;
  wms_title?: string;
  wms_abstract?: string;
}

export interface NewProjectRequest {
  name: string;
  author: string;
  schema?: string;
}

/** Listeners told when projects appear or go, e.g. to keep the tile cache configuration in step. */
export interface ProjectLifecycle {
  projectCreated?(ref: ProjectRef): Promise<void>;
  projectRemoved?(ref: ProjectRef): Promise<void>;
}

/** PostgreSQL's own schemas (`pg_catalog`, `pg_toast`, ...): never a place for projects, nor one to read. */
const SYSTEM_SCHEMA = /^(pg_|information_schema$)/i;

export function isSystemSchema(schema: string): boolean {
  return SYSTEM_SCHEMA.test(schema);
}

/** A schema named in a request: a valid name, not one of PostgreSQL's own (403). */
export function checkSchema(schema: string): string {
  checkName('schema', schema);
  if (isSystemSchema(schema)) throw new Forbidden(`schema "${schema}" is PostgreSQL's own; projects live in others`);
  return schema;
}

/** The reference to a project named in a request: both names checked, the schema defaulting to public. */
export function projectRef(name: string, schema = DEFAULT_SCHEMA): ProjectRef {
  return { name: checkName('project', name), schema: checkSchema(schema) };
}

function checkAuthor(author: string): void {
  if (author.trim() === '') throw new BadRequest('author must not be empty');
  checkText('author', author);
}

export class ProjectService {
  constructor(
    private readonly repository: ProjectRepository,
    private readonly crs: CrsResolver,
    private readonly pins: ProjectPins,
    private readonly options: { cacheEnabled: boolean; lifecycle?: ProjectLifecycle },
  ) {}

  list(schema = DEFAULT_SCHEMA): Promise<string[]> {
    return this.repository.store.list(checkSchema(schema));
  }

  /** The project files of a schema that Steward serves under no name, with why and how to serve them. */
  async unlisted(schema = DEFAULT_SCHEMA): Promise<UnlistedProject[]> {
    return unlistedProjects(this.repository.store, await this.list(schema));
  }

  async info(ref: ProjectRef): Promise<ProjectInfo> {
    const document = await this.repository.read(ref);
    const metadata = document.metadata();
    const storage = this.repository.store.kind;
    return {
      title: metadata.title,
      abstract: metadata.abstract,
      author: metadata.author,
      wms_title: metadata.wmsTitle,
      wms_abstract: metadata.wmsAbstract,
      creation_datetime: metadata.creation || (document.root.attributes.get('saveDateTime') ?? ''),
      crs: metadata.authid,
      storage,
      ...(storage === 'postgresql' ? { schema: ref.schema } : {}),
      cache: this.options.cacheEnabled ? 'mapproxy' : 'disabled',
      pinned: await this.pins.has(ref),
    };
  }

  async create(request: NewProjectRequest): Promise<void> {
    const ref = projectRef(request.name, request.schema);
    checkAuthor(request.author);
    const crs = this.crs.fromAuthid(DEFAULT_PROJECT_CRS);
    if (!crs) throw new Error(`GDAL does not know ${DEFAULT_PROJECT_CRS}`);
    const document = ProjectDocument.create({
      title: ref.name,
      author: request.author,
      creation: localDateTime(),
      crs,
    });
    await this.repository.create(ref, document);
    try {
      await this.options.lifecycle?.projectCreated?.(ref);
    } catch (error) {
      // A create that failed (the tile cache's configuration on a full disk) leaves no project: a retry starts anew.
      await this.remove(ref);
      throw error;
    }
  }

  /** Changes the project's metadata as `QgsProject::setTitle`, `setMetadata` and `writeEntry` would. */
  async changeMetadata(ref: ProjectRef, request: MetadataRequest): Promise<ProjectInfo> {
    if (request.author !== undefined) checkAuthor(request.author);
    for (const [field, value] of Object.entries(request) as Array<[string, string]>) checkText(field, value);
    const changed = Object.keys(request).join(', ');
    await this.repository.update(
      ref,
      (document) =>
        document.changeMetadata({
          title: request.title,
          abstract: request.abstract,
          author: request.author,
          wmsTitle: request.wms_title,
          wmsAbstract: request.wms_abstract,
        }),
      [],
      `changed the project's ${changed}`,
    );
    return this.info(ref);
  }

  /** Removes the project; false when there was none. */
  async remove(ref: ProjectRef): Promise<boolean> {
    const removed = await this.repository.remove(ref);
    if (removed) await this.options.lifecycle?.projectRemoved?.(ref);
    return removed;
  }
}
