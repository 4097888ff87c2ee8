import { randomUUID } from 'node:crypto';
import { access, mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

import { BadRequest, Conflict, NotFound } from '../errors.js';
import { type LayerEntry, type ProjectDocument } from '../qgis/project.js';
import { type LayerLifecycle, type PlannedLayer } from '../services/layers.js';
import { DEFAULT_SCHEMA, type ProjectLifecycle, projectRef } from '../services/projects.js';
import { type ProjectRepository } from '../services/repository.js';
import { writeFileAtomic } from '../storage/atomic-file.js';
import { onFullDisk } from '../storage/disk-space.js';
import { KeyedMutex, withFileLock } from '../storage/lock.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type CacheLayout } from './layout.js';
import { type CacheLayer, mapproxyConfig, type NamedLayer, namedLayers } from './mapproxy-config.js';
import { removeDir } from './remove-dir.js';
import { type CacheSelection, seedConfig, type SeedKind } from './seed-config.js';
import { runMapProxySeed, type SeedRun } from './seed-process.js';
import { type TileStore, type TileUsage } from './tile-store.js';
import { type Validation } from './validate.js';
import { toYaml } from './yaml.js';

export interface CacheStatus {
  valid: boolean;
  storage: 'filesystem' | 's3';
  reason?: string;
}

/** What a project's cached tiles take on their storage, layer by layer. */
export interface CacheUsage {
  storage: 'filesystem' | 's3';
  layers: Array<{ name: string } & TileUsage>;
  total: TileUsage;
}

export interface TileCacheOptions {
  layout: CacheLayout;
  tiles: TileStore;
  repository: ProjectRepository;
  /** The project's QGIS Server URL with `MAP=` (MapService.projectUrl). */
  projectUrl(ref: ProjectRef): Promise<URL>;
  validate(file: string): Promise<Validation>;
  /** Added to the environment of `mapproxy-seed`: MapProxy's S3 caches read their endpoint and keys there. */
  env: Readonly<Record<string, string>>;
  /** The token MapProxy presents to QGIS Server, when nginx checks tokens (access/token-secret.ts). */
  qgisToken?: string | undefined;
}

/** Seeding or truncating the cache, ready to run as a job; it resolves to the job's result. */
export type SeedWork = (run: SeedRun) => Promise<Record<string, unknown>>;

function selectLayers(project: string, layers: readonly NamedLayer[], names: string[] | undefined): NamedLayer[] {
  if (names === undefined) return [...layers];
  const unknown = names.filter((name) => !layers.some(({ layer }) => layer.name === name));
  if (unknown.length > 0) {
    throw new NotFound(`project "${project}" has no layer ${unknown.map((name) => `"${name}"`).join(', ')}`, {
      code: 'layer_not_found',
    });
  }
  return layers.filter(({ layer }) => names.includes(layer.name));
}

function cacheLayers(document: ProjectDocument): CacheLayer[] {
  return document.layers().map((layer) => document.published(layer));
}

/** The refs of the `[name, schema]` pairs that are valid names. */
function validRefs(pairs: ReadonlyArray<readonly [string, string]>): ProjectRef[] {
  return pairs.flatMap(([name, schema]) => {
    try {
      return [projectRef(name, schema)];
    } catch {
      return [];
    }
  });
}

/** Each `<schema>_<name>` an app of a project in PostgreSQL could be. */
function schemaSplits(app: string): ProjectRef[] {
  const pairs: Array<[string, string]> = [];
  for (let at = app.indexOf('_'); at >= 0; at = app.indexOf('_', at + 1))
    pairs.push([app.slice(at + 1), app.slice(0, at)]);
  return validRefs(pairs);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * The MapProxy tile cache of each project: its configuration file, kept in step with the
 * project's layers, and its cached tiles, cleared when what they show changes. Each project's
 * configuration is written by one writer at a time, in this process and across processes.
 */
export class TileCacheService implements ProjectLifecycle, LayerLifecycle {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly options: TileCacheOptions) {}

  get storage(): 'filesystem' | 's3' {
    return this.options.tiles.kind;
  }

  /** The MapProxy app of the project: `<schema>_<project>` for projects in PostgreSQL. */
  appName(ref: ProjectRef): string {
    return this.options.repository.store.kind === 'postgresql' ? `${ref.schema}_${ref.name}` : ref.name;
  }

  /**
   * The stored projects MapProxy serves at `/<app>/` (appName): the project of that name, or in
   * PostgreSQL each `<schema>_<name>` the app splits into that is stored (two may be, alike). A
   * project the store cannot answer for is counted in, so that it must be readable too.
   */
  async projectsOfApp(app: string): Promise<ProjectRef[]> {
    const { store } = this.options.repository;
    const candidates = store.kind === 'postgresql' ? schemaSplits(app) : validRefs([[app, DEFAULT_SCHEMA]]);
    const stored = await Promise.all(
      candidates.map((ref) =>
        store.identity(ref).then(
          (identity) => identity !== undefined,
          () => true,
        ),
      ),
    );
    return candidates.filter((_, index) => stored[index]);
  }

  /** The layers the project's MapProxy configuration serves, by name. */
  async layerNames(ref: ProjectRef): Promise<string[]> {
    return namedLayers(cacheLayers(await this.options.repository.read(ref))).map(({ layer }) => layer.name);
  }

  /** Call before adding a layer with a time dimension: MapProxy caches dimensions only on disk. */
  checkTimeDimension(hasTime: boolean): void {
    if (hasTime && !this.options.tiles.supportsDimensions) {
      throw new BadRequest(
        'time dimension caching is not supported with the S3 cache: add the layer without "datetime"',
      );
    }
  }

  checkNewLayer(_ref: ProjectRef, layer: PlannedLayer): void {
    this.checkTimeDimension(layer.time !== undefined);
  }

  async projectCreated(ref: ProjectRef): Promise<void> {
    await this.locked(ref, () => this.writeConfig(ref));
  }

  async projectRemoved(ref: ProjectRef): Promise<void> {
    await this.locked(ref, async () => {
      await rm(this.options.layout.configFile(this.appName(ref)), { force: true });
      await this.clearProject(ref);
    });
  }

  /** A project made without Steward has no cache until it is reset (`POST .../cache/reset`). */
  async layerAdded(ref: ProjectRef): Promise<void> {
    await this.publishedNamesChanged(ref);
  }

  /** QGIS Server publishes the layers under other names (WMSUseLayerIDs): the sources ask for them. */
  async publishedNamesChanged(ref: ProjectRef): Promise<void> {
    await this.locked(ref, async () => {
      if (await this.hasConfig(ref)) await this.writeConfig(ref);
    });
  }

  async layerRemoved(ref: ProjectRef, layer: LayerEntry): Promise<void> {
    await this.locked(ref, async () => {
      if (await this.hasConfig(ref)) await this.writeConfig(ref);
      await this.clearLayer(ref, layer.name);
    });
  }

  /** For the styles code: the layer's current style changed, so its cached tiles and legends are stale. */
  async layerStyleChanged(ref: ProjectRef, layerName: string): Promise<void> {
    await this.locked(ref, () => this.clearLayer(ref, layerName));
  }

  /** Whether the project's configuration exists and MapProxy loads it. */
  async status(ref: ProjectRef): Promise<CacheStatus> {
    await this.options.repository.read(ref);
    const storage = this.storage;
    const file = this.options.layout.configFile(this.appName(ref));
    if (!(await exists(file))) {
      return {
        valid: false,
        storage,
        reason: `project "${ref.name}" has no cache configuration yet: reset the cache to create it`,
      };
    }
    return { ...(await this.options.validate(file)), storage };
  }

  /** The tiles cached for each of the project's layers, and their bytes. */
  async usage(ref: ProjectRef): Promise<CacheUsage> {
    const project = await this.options.repository.read(ref);
    const app = this.appName(ref);
    const layers = [];
    for (const { name } of cacheLayers(project)) layers.push({ name, ...(await this.options.tiles.usage(app, name)) });
    const total = {
      tiles: layers.reduce((sum, layer) => sum + layer.tiles, 0),
      bytes: layers.reduce((sum, layer) => sum + layer.bytes, 0),
    };
    return { storage: this.storage, layers, total };
  }

  /** Clears every cached tile and rebuilds the configuration from the project's current layers. */
  async reset(ref: ProjectRef): Promise<void> {
    await this.options.repository.read(ref);
    await this.locked(ref, async () => {
      await this.clearProject(ref);
      await this.writeConfig(ref);
    });
  }

  /**
   * Checks a seed or a truncation of the project's cache (the project, its configuration, the
   * layers, the levels) and returns the work: `mapproxy-seed` on the configuration Steward wrote,
   * with a seed configuration written beside it for the run.
   */
  /** Conflict unless the project has a cache configuration to seed with. */
  async assertSeedable(ref: ProjectRef): Promise<void> {
    if (!(await this.hasConfig(ref))) {
      throw new Conflict(`project "${ref.name}" has no cache configuration yet: reset the cache to create it`);
    }
  }

  async planSeed(ref: ProjectRef, kind: SeedKind, selection: CacheSelection): Promise<SeedWork> {
    const project = await this.options.repository.read(ref);
    await this.assertSeedable(ref);
    if (selection.minZoom > selection.maxZoom) throw new BadRequest('min_zoom must not be above max_zoom');
    const [xmin = 0, ymin = 0, xmax = 0, ymax = 0] = selection.extent ?? [0, 0, 1, 1];
    if (!(xmin < xmax && ymin < ymax))
      throw new BadRequest('extent must be [xmin, ymin, xmax, ymax] with xmin < xmax and ymin < ymax');
    const layers = selectLayers(ref.name, namedLayers(cacheLayers(project)), selection.layers);
    if (layers.length === 0) throw new Conflict(`project "${ref.name}" has no layers to ${kind}`);
    const names = layers.map(({ layer }) => layer.name);
    if (kind === 'truncate' && selection.extent === undefined) {
      return async (run) => ({ ...(await this.clearLevels(ref, names, selection, run)), layers: names });
    }
    const app = this.appName(ref);
    const { layout } = this.options;
    const text = toYaml(seedConfig(kind, selection, layers), [
      `What one ${kind} of the project "${ref.name}" covers, written by Steward for mapproxy-seed.`,
    ]);
    return async (run) => {
      const file = layout.seedFile(app, randomUUID());
      await mkdir(dirname(file), { recursive: true });
      await writeFileAtomic(file, text);
      try {
        const seeded = await runMapProxySeed(
          { proxy: layout.configFile(app), seed: file, kind },
          run,
          this.options.env,
        );
        return { ...seeded, layers: names };
      } finally {
        await rm(file, { force: true });
      }
    };
  }

  /**
   * Removes whole levels of the layers: every tile there, wherever it lies. (MapProxy 1.15's own
   * level removal looks for `tms` levels under zero-padded names and removes nothing.)
   */
  private async clearLevels(
    ref: ProjectRef,
    layers: string[],
    { minZoom, maxZoom }: CacheSelection,
    run: SeedRun,
  ): Promise<{ levels: number }> {
    const app = this.appName(ref);
    const total = layers.length * (maxZoom - minZoom + 1);
    let done = 0;
    for (const layer of layers) {
      for (let level = minZoom; level <= maxZoom; level += 1) {
        if (run.signal.aborted) throw run.signal.reason as Error;
        await this.options.tiles.clearLevel(app, layer, level);
        run.progress((done += 1), total);
      }
    }
    return { levels: maxZoom - minZoom + 1 };
  }

  private locked<T>(ref: ProjectRef, work: () => Promise<T>): Promise<T> {
    const app = this.appName(ref);
    const { configDir } = this.options.layout;
    return this.mutex.run(app, () =>
      onFullDisk(configDir, () => withFileLock(this.options.layout.lockFile(app), work)),
    );
  }

  private hasConfig(ref: ProjectRef): Promise<boolean> {
    return exists(this.options.layout.configFile(this.appName(ref)));
  }

  private async writeConfig(ref: ProjectRef): Promise<void> {
    const { layout, tiles, repository } = this.options;
    const app = this.appName(ref);
    const config = mapproxyConfig({
      title: ref.name,
      projectUrl: await this.options.projectUrl(ref),
      layers: cacheLayers(await repository.read(ref)),
      tiles,
      app,
      mapproxyDir: layout.mapproxyDir(app),
      ...(this.options.qgisToken !== undefined && {
        sourceHeaders: { Authorization: `Bearer ${this.options.qgisToken}` },
      }),
    });
    const comments = [
      `MapProxy configuration of the project "${ref.name}", written by Steward from the project's layers.`,
      'Steward rewrites it when layers change; resetting the cache rebuilds it.',
    ];
    await mkdir(layout.configDir, { recursive: true });
    // It may hold the tile cache's token: for Steward's user alone, as MapProxy runs under it too.
    await writeFileAtomic(layout.configFile(app), toYaml(config, comments), { mode: 0o600 });
  }

  private async clearLayer(ref: ProjectRef, layerName: string): Promise<void> {
    const app = this.appName(ref);
    await this.options.tiles.clearLayer(app, layerName);
    // MapProxy names cached legends by a hash of their request, so they cannot be told apart per layer.
    await removeDir(this.options.layout.legendDir(app));
  }

  private async clearProject(ref: ProjectRef): Promise<void> {
    const app = this.appName(ref);
    await this.options.tiles.clearProject(app);
    await removeDir(this.options.layout.projectDir(app));
  }
}
