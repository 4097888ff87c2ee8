import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { BadRequest, Conflict, NotFound } from '../errors.js';
import { type LayerEntry, ProjectDocument } from '../qgis/project.js';
import { diffProjects, type ProjectDiff } from '../qgis/project-diff.js';
import { writeFileAtomic } from '../storage/atomic-file.js';
import { projectKey, type ProjectRef } from '../storage/project-store.js';
import { decodeChain, decodeStyles } from '../storage/version-codec.js';
import { decodeChainLayers } from '../storage/version-layers.js';
import { type VersionFacts } from '../storage/version-store.js';
import { type LayerService } from './layers.js';
import { projectNotFound, type ProjectRepository } from './repository.js';
import { unifiedDiff } from './text-diff.js';

/** A version as the API tells it: its id is text, for ids to stay opaque to clients. */
export interface VersionInfo extends Omit<VersionFacts, 'id'> {
  id: string;
}

export interface VersionPage {
  versions: VersionInfo[];
  /** The `before` of the next page; null on the last. */
  next: string | null;
}

export interface StyleDiff {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface VersionDiff extends ProjectDiff {
  from: string;
  to: string;
  /** The project's stored styles (not the layers' own copies). */
  styles: StyleDiff;
  /** The unified difference of the project files. */
  text: string;
}

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;

function info(facts: VersionFacts): VersionInfo {
  return { ...facts, id: String(facts.id) };
}

/** A version id as the API gives it: a positive whole number, else no version at all. */
function versionId(ref: ProjectRef, text: string): number {
  const id = /^[1-9]\d{0,14}$/.test(text) ? Number(text) : undefined;
  if (id === undefined) throw unknownVersion(ref, text);
  return id;
}

function unknownVersion(ref: ProjectRef, id: string): NotFound {
  return new NotFound(`project "${ref.name}" has no version "${id}"`, { code: 'version_not_found' });
}

/** A version's project file and styles. */
interface Version {
  id: number;
  /** The project file, in pieces. */
  pieces: readonly Uint8Array[];
  /** Every layer of the project file, when asked for and the write that made the version (or its chain) told them. */
  layers: readonly LayerEntry[] | undefined;
  styles: Map<string, string>;
}

function joined(pieces: readonly Uint8Array[]): Buffer {
  const [only] = pieces;
  return pieces.length === 1 && Buffer.isBuffer(only) ? only : Buffer.concat(pieces);
}

/**
 * The versions of a project (docs/history.md): the list, the project as each version had it, the
 * difference between two, and the restore of one, which makes a new version equal to it.
 */
export class HistoryService {
  constructor(
    private readonly repository: ProjectRepository,
    private readonly layers: LayerService,
  ) {}

  private get versions() {
    return this.repository.store.versions;
  }

  async list(ref: ProjectRef, options: { before?: string; limit?: number } = {}): Promise<VersionPage> {
    await this.requireProject(ref);
    const limit = options.limit ?? DEFAULT_PAGE;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)
      throw new BadRequest(`limit must be a whole number from 1 to ${MAX_PAGE}, not ${limit}`);
    const before = options.before === undefined ? undefined : versionId(ref, options.before);
    // One more than asked tells whether a next page exists.
    const rows = await this.versions.list(ref, before, limit + 1);
    const page = rows.slice(0, limit);
    return { versions: page.map(info), next: rows.length > limit ? String((page.at(-1) as VersionFacts).id) : null };
  }

  private async requireProject(ref: ProjectRef): Promise<void> {
    if (!(await this.repository.exists(ref))) throw projectNotFound(ref);
  }

  /**
   * Version `text`: as its write knew it when this process recorded it lately, else rebuilt from
   * its chain, with the layers the chain kept when `withLayers`.
   */
  private async version(ref: ProjectRef, text: string, withLayers = false): Promise<Version> {
    await this.requireProject(ref);
    const id = versionId(ref, text);
    const identity = await this.versions.identityOf(ref, id);
    if (identity === undefined) throw unknownVersion(ref, text);
    const kept = this.repository.keptVersion(ref, id, identity);
    const stored = await this.versions.styles(ref, id);
    const styles = stored ? decodeStyles(stored) : new Map<string, string>();
    if (kept?.pieces) return { id, pieces: kept.pieces, layers: kept.layers, styles };
    const chain = await this.versions.chain(ref, id);
    if (chain.length === 0) throw unknownVersion(ref, text);
    const project = projectKey(ref);
    const layers = kept?.layers ?? (withLayers ? decodeChainLayers(project, chain) : undefined);
    return { id, pieces: [decodeChain(project, chain)], layers, styles };
  }

  /** The project file as version `id` had it. */
  async content(ref: ProjectRef, id: string): Promise<Buffer> {
    return joined((await this.version(ref, id)).pieces);
  }

  /** How version `to` differs from version `from`. */
  async diff(ref: ProjectRef, from: string, to: string): Promise<VersionDiff> {
    const [older, newer] = [await this.version(ref, from), await this.version(ref, to)];
    const [before, after] = [joined(older.pieces).toString('utf8'), joined(newer.pieces).toString('utf8')];
    const names = new Set([...older.styles.keys(), ...newer.styles.keys()]);
    return {
      from: String(older.id),
      to: String(newer.id),
      ...diffProjects(ProjectDocument.parse(before), ProjectDocument.parse(after)),
      styles: {
        added: [...names].filter((name) => !older.styles.has(name)).sort(),
        removed: [...names].filter((name) => !newer.styles.has(name)).sort(),
        changed: [...names]
          .filter((name) => older.styles.has(name) && newer.styles.has(name))
          .filter((name) => older.styles.get(name) !== newer.styles.get(name))
          .sort(),
      },
      text: unifiedDiff(before, after, { from: `version ${older.id}`, to: `version ${newer.id}` }),
    };
  }

  /**
   * Makes a new version equal to version `id`, styles included; QGIS Server serves it at once.
   * Refused (Conflict, naming them) when layers of that version read data files that are gone,
   * unless `force`. Answers the new version.
   */
  async restore(ref: ProjectRef, id: string, force = false): Promise<VersionInfo> {
    const version = await this.version(ref, id, true);
    const layers = version.layers ?? ProjectDocument.layersOf(joined(version.pieces));
    const broken = await this.brokenLayers(ref, layers);
    if (broken.length > 0 && !force) {
      throw new Conflict(
        `version ${version.id} has layers whose data files are gone: ${broken.map((name) => `"${name}"`).join(', ')}; restore with ?force=true to restore it all the same`,
        { code: 'broken_layers' },
      );
    }
    await this.repository.replace(ref, version.pieces, layers, version.styles, `restored version ${version.id}`);
    await this.restoreFiles(ref, version);
    const [latest] = await this.versions.list(ref, undefined, 1);
    return info(latest as VersionFacts);
  }

  /**
   * Puts back the files of the project's folder that the versions kept as they were removed (style
   * packages' images, docs/history.md) and that the restored version names.
   */
  private async restoreFiles(ref: ProjectRef, version: Version): Promise<void> {
    const store = this.repository.store;
    const kept = (await store.versions.keptFiles?.(ref)) ?? [];
    if (kept.length === 0) return;
    const texts = [joined(version.pieces).toString('utf8'), ...version.styles.values()];
    const dir = store.dataDir(ref);
    await store.withLock(ref, async () => {
      for (const path of kept) {
        const file = join(dir, path);
        if (existsSync(file) || !texts.some((text) => text.includes(file))) continue;
        const bytes = await store.versions.keptFile?.(ref, path);
        if (!bytes) continue;
        await mkdir(dirname(file), { recursive: true });
        await writeFileAtomic(file, bytes);
      }
    });
  }

  /** The names of `layers` whose datasource is a local file that does not exist; each file is looked for once. */
  private async brokenLayers(ref: ProjectRef, layers: readonly LayerEntry[]): Promise<string[]> {
    const sources = await this.layers.gdalSources(ref, layers);
    const exists = new Map<string, boolean>();
    const broken = layers.filter((_, index) => {
      const source = sources[index];
      if (source?.kind !== 'file' || !source.gdalPath.startsWith('/') || source.gdalPath.startsWith('/vsi'))
        return false;
      const path = source.gdalPath;
      if (!exists.has(path)) exists.set(path, existsSync(path));
      return exists.get(path) === false;
    });
    return [...new Set(broken.map((layer) => layer.name))];
  }
}
