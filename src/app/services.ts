import { tmpdir } from 'node:os';

import { type FastifyBaseLogger } from 'fastify';

import { FilesystemAccessStore } from '../access/filesystem-access.js';
import { OidcVerifier } from '../access/oidc.js';
import { PostgresAccessStore } from '../access/postgres-access.js';
import { AccessService } from '../access/service.js';
import { type Config } from '../config.js';
import { CrsResolver } from '../gdal/crs.js';
import { keepWorkerReadyAfterFirstTask, stopWorkerReady } from '../gdal/gdal-child.js';
import { configureGdalMemory } from '../gdal/gdal-memory.js';
import { configureObjectStorage } from '../gdal/s3.js';
import { type ApiServices } from '../http/api.js';
import { ProjectChecker } from '../insight/checks.js';
import { HealthChecks } from '../insight/health.js';
import { InstanceFonts } from '../insight/instance-fonts.js';
import { Metrics } from '../insight/metrics.js';
import { ProjectFleet } from '../insight/project-fleet.js';
import { FilesystemJobStore } from '../jobs/filesystem-jobs.js';
import { PostgresJobStore } from '../jobs/postgres-jobs.js';
import { JobService } from '../jobs/service.js';
import { type RecentLog } from '../log.js';
import { InstanceFleet } from '../monitor/instance-fleet.js';
import { InstanceRegistry, type MonitorLogger } from '../monitor/registry.js';
import { type SymbologyCatalogue, SymbologyCatalogues } from '../qgis/symbology/catalogue.js';
import { installedFontFamilies } from '../runtime/fonts.js';
import { localQgisVersion } from '../runtime/qgis-version.js';
import { objectStorageConfigured } from '../s3-settings.js';
import { AdministeredQgis } from '../services/administered-qgis.js';
import { DataFiles } from '../services/data-files.js';
import { DataRoots } from '../services/data-roots.js';
import { DatasourceRepair } from '../services/datasource-repair.js';
import { DatasourceBrowser } from '../services/datasources.js';
import { FeatureQueries } from '../services/feature-queries.js';
import { FieldQueries } from '../services/field-queries.js';
import { HistoryService } from '../services/history.js';
import { LayerInspector } from '../services/layer-inspector.js';
import { LayerPropertiesService } from '../services/layer-properties.js';
import { LayerTreeService } from '../services/layer-tree.js';
import { LayerService } from '../services/layers.js';
import { MapService, qgisProjectUrl } from '../services/maps.js';
import { ProjectPins } from '../services/pins.js';
import { PostgresImports } from '../services/postgres-import.js';
import { ProcessingService } from '../services/processing.js';
import { ProjectArchives } from '../services/project-archives.js';
import { ProjectServicesService } from '../services/project-services.js';
import { ProjectStyles } from '../services/project-styles.js';
import { ProjectSummaries } from '../services/project-summaries.js';
import { DEFAULT_SCHEMA, type ProjectLifecycle, projectRef, ProjectService } from '../services/projects.js';
import { ProviderRegistry } from '../services/providers/registry.js';
import { ProjectRepository } from '../services/repository.js';
import { UploadFolders } from '../services/revision-folders.js';
import { SldStyles } from '../services/sld-styles.js';
import { StyleDocuments } from '../services/style-documents.js';
import { StyleFiles } from '../services/style-files.js';
import { StylePackages } from '../services/style-packages.js';
import { StylePreviews } from '../services/style-previews.js';
import { StyleService } from '../services/styles.js';
import { type OwedVersionListener, VersionRecorder } from '../services/version-recorder.js';
import { FilesystemStore } from '../storage/filesystem-store.js';
import { type PostgresStore } from '../storage/postgres-store.js';
import { type ProjectStore } from '../storage/project-store.js';
import { clearUploadLeftovers } from '../storage/upload-leftovers.js';
import { MapProxyCapabilities } from '../tile-cache/capabilities.js';
import { createTileCache } from '../tile-cache/factory.js';
import { Reseeder } from '../tile-cache/reseed.js';
import { FastcgiQgisClient } from '../transport/qgis-fastcgi.js';
import { HttpQgisClient } from '../transport/qgis-get.js';
import { Closers } from './closers.js';
import { serverSettings } from './server-settings.js';

/** Bytes a project upload may have when the configuration does not say. */
const DEFAULT_PUBLISH_BODY_LIMIT = 512 * 1024 * 1024;

export interface Services extends ApiServices {
  /** Stops what the services hold open: the monitoring port, database pools, connections. */
  close(): Promise<void>;
}

/** The registry of QGIS Server instances when monitoring is on; it listens once `start` is called. */
function monitoringRegistry(config: Config, logger: FastifyBaseLogger): InstanceRegistry | undefined {
  if (config.monitoringPort === undefined) return undefined;
  return new InstanceRegistry({
    token: config.monitoringToken,
    log: monitorLog(logger),
  });
}

function monitorLog(logger: FastifyBaseLogger): MonitorLogger {
  return { info: (message) => logger.info(message), warn: (message) => logger.warn(message) };
}

/** Loaded only with database support: the PostgreSQL client is a large part of the API's memory. */
async function openPostgresStore(config: Config, service: string): Promise<PostgresStore> {
  const { PostgresStore } = await import('../storage/postgres-store.js');
  return PostgresStore.open(service, config.projectsDir, config.pgServiceFiles);
}

/** The administered QGIS Server version: from the instances' plugin, else the setting, else the local binary. */
async function administeredQgis(
  config: Config,
  registry: InstanceRegistry | undefined,
  logger: FastifyBaseLogger,
): Promise<AdministeredQgis> {
  const qgis = await AdministeredQgis.create(await SymbologyCatalogues.load(), {
    instances: registry,
    setting: config.qgisServerVersion,
    local: localQgisVersion,
  });
  const { version, source, catalogueVersion, match } = qgis.symbology();
  logger.info(
    `QGIS Server ${version ?? 'version unknown'} (${source}): symbology catalogue of QGIS ${catalogueVersion} (${match})`,
  );
  return qgis;
}

/** Clears what stopped processes left in the store, and says which projects it could not clear and why. */
/** Logs a write whose version could not be stored: the write stands, and its version waits for the project's next write. */
function owedVersionLog(logger: FastifyBaseLogger): OwedVersionListener {
  return (ref, error) =>
    logger.error(
      { err: error, project: ref.name, schema: ref.schema },
      `the version of a write of project "${ref.name}" could not be stored; it is recorded at the project's next write`,
    );
}

async function clearLeftovers(store: ProjectStore, logger: FastifyBaseLogger): Promise<void> {
  const { cleared, failures } = await store.clearLeftovers();
  if (cleared > 0) logger.info(`cleared ${cleared} leftovers of writes interrupted by a stopped process`);
  for (const { project, reason, refused } of failures) {
    const name = project.schema === 'public' ? `"${project.name}"` : `"${project.name}" (schema "${project.schema}")`;
    logger.error(
      refused
        ? `project ${name}: its journal cannot be settled (${reason}); the project is kept as it is on disk and its reads and writes are refused until its journal and checkpoint are settled or moved aside (docs/storage.md)`
        : `project ${name}: leftovers of an interrupted write cannot be cleared (${reason}); they stay until the next start`,
    );
  }
}

/** Takes into the database the styles an earlier Steward kept in database projects' data folders (docs/storage.md). */
async function adoptFolderStyles(store: PostgresStore, logger: FastifyBaseLogger): Promise<void> {
  const { cleared, failures } = await store.adoptFolderStyles();
  if (cleared > 0) logger.info(`took ${cleared} styles of database projects from their data folders into the database`);
  for (const { project, reason } of failures) {
    logger.warn(`project "${project.name}" (schema "${project.schema}"): ${reason}`);
  }
}

/** Clears, in the background, the files of uploads a stopped process cut short (storage/upload-leftovers.ts). */
function clearUploads(uploadRoot: string | undefined, logger: FastifyBaseLogger): void {
  if (uploadRoot === undefined) return;
  void clearUploadLeftovers(uploadRoot).then(
    (cleared) => {
      if (cleared > 0) logger.info(`cleared ${cleared} files of uploads cut short by a stopped process`);
    },
    (error: unknown) => logger.warn(`cannot clear what cut-short uploads left: ${(error as Error).message}`),
  );
}

/** The folders Steward writes to: projects and their data, the tile cache's, and work files of processing. */
function writtenFolders(config: Config): string[] {
  return [
    config.projectsDir,
    ...(config.mapproxyProjectsDir === undefined ? [] : [config.mapproxyProjectsDir]),
    tmpdir(),
  ];
}

/**
 * Builds every service from the configuration, each from the ones it needs, in that order; if a
 * step fails, what the earlier ones opened is closed before the error is thrown on.
 */
export async function createServices(
  config: Config,
  logger: FastifyBaseLogger,
  recentLog: RecentLog,
): Promise<Services> {
  const closers = new Closers();
  return closers.opening(
    () => buildServices(config, logger, recentLog, closers),
    (error) => logger.error({ err: error }, 'closing what start-up opened failed'),
  );
}

async function buildServices(
  config: Config,
  logger: FastifyBaseLogger,
  recentLog: RecentLog,
  closers: Closers,
): Promise<Services> {
  configureGdalMemory();
  const objectStorage = configureObjectStorage(config.s3);
  if (objectStorage.length > 0) logger.info(`object storage settings for GDAL: ${objectStorage.join(', ')}`);
  keepWorkerReadyAfterFirstTask();
  closers.add(stopWorkerReady);
  const crs = new CrsResolver();
  const registry = monitoringRegistry(config, logger);
  const postgres = config.psqlService === undefined ? undefined : await openPostgresStore(config, config.psqlService);
  const store = postgres ?? new FilesystemStore(config.projectsDir);
  closers.add(() => store.close());
  // Steward processes sharing the database share their instances; without one, a process has its own.
  const fleet = registry && postgres && (await InstanceFleet.join(postgres.database, registry, monitorLog(logger)));
  if (fleet) closers.add(() => fleet.close());
  const instances = fleet ?? registry;
  await clearLeftovers(store, logger);
  clearUploads(config.uploadRoot, logger);
  // Tokens, roles and the audit log are kept with the projects; enforced once STEWARD_API_TOKEN is set.
  const access = new AccessService(
    config.apiToken,
    postgres ? new PostgresAccessStore(postgres.database) : new FilesystemAccessStore(config.projectsDir),
    {
      log: { info: (message) => logger.info(message), warn: (message) => logger.warn(message) },
      oidc: config.oidc && new OidcVerifier(config.oidc),
    },
  );
  closers.add(() => access.close());
  await access.start();
  if (postgres) await adoptFolderStyles(postgres, logger);
  // QGIS Server keeps a database project cached until its plugin is told the project changed.
  const repository = new ProjectRepository(store, {
    cacheBytes: config.projectCacheBytes,
    onChanged: postgres && (async (ref) => instances?.invalidateProject(await postgres.mapParameter(ref))),
    history:
      config.history.versions > 0 ? new VersionRecorder(store, config.history, owedVersionLog(logger)) : undefined,
  });
  const tileCache = await createTileCache(
    config,
    repository,
    (ref) => qgisProjectUrl(config.qgisServerUrl, store, ref),
    access.tileCacheToken,
  );
  if (tileCache) closers.add(() => tileCache.close());
  const cache = tileCache?.service;
  const jobs = new JobService(
    postgres ? new PostgresJobStore(postgres.database) : new FilesystemJobStore(config.projectsDir),
    {
      concurrency: config.jobsConcurrency,
      withSchema: postgres !== undefined,
      log: { info: (message) => logger.info(message), warn: (message) => logger.warn(message) },
    },
  );
  closers.add(() => jobs.close());
  await jobs.start();
  const pins = new ProjectPins(
    repository,
    (config.pinnedProjects ?? []).map((name) => projectRef(name)),
  );
  const uploads = new UploadFolders(store, config.uploadRoot, (ref, error) =>
    logger.error(
      { err: error, project: ref.name, schema: ref.schema },
      `data revisions of project "${ref.name}" no longer read could not be removed; they go at its next publish`,
    ),
  );
  const projectLifecycle: ProjectLifecycle = {
    projectCreated: async (ref) => cache?.projectCreated(ref),
    projectRemoved: async (ref) => {
      await cache?.projectRemoved(ref);
      await uploads.projectRemoved(ref);
    },
  };
  const projects = new ProjectService(repository, crs, pins, {
    cacheEnabled: cache !== undefined,
    lifecycle: projectLifecycle,
  });
  const inspector = new LayerInspector(crs);
  const projectStyles = new ProjectStyles(repository.store);
  const dataRoots = await DataRoots.create(config.dataRoots, config.allowIndirectDatasources ?? false);
  const providers = new ProviderRegistry(dataRoots, inspector);
  const styleFiles = new StyleFiles(dataRoots, config.styleRemoteHosts ?? []);
  const qgis = await administeredQgis(config, registry, logger);
  const catalogue = (): SymbologyCatalogue => qgis.catalogue();
  const layers = new LayerService(repository, crs, providers, styleFiles, projectStyles, catalogue, cache);
  const processing = new ProcessingService(
    {
      findLayer: (ref, layer) => layers.source(ref, layer),
      listLayers: (ref) => layers.sources(ref),
      sourcesInSchema: (schema) => layers.sourcesInSchema(schema),
    },
    { outputs: dataRoots, limits: { maxBytes: config.processingOutputLimit, reserve: config.minFreeSpace } },
  );
  const qgisClient = config.qgisServerFcgi
    ? new FastcgiQgisClient(config.qgisServerFcgi, config.qgisRequestSettings)
    : new HttpQgisClient();
  const maps = new MapService(config.qgisServerUrl, repository, layers, qgisClient);
  closers.add(() => maps.close());
  const styles = new StyleService(repository, layers, projectStyles, catalogue, cache);
  const styleDocuments = new StyleDocuments(maps, layers);
  const fonts = new InstanceFonts(instances, installedFontFamilies);
  const stylePackages = new StylePackages(repository, styles, projectStyles, config.styleBodyLimit, fonts, styleFiles);
  const sldStyles = new SldStyles(maps, layers, stylePackages);
  const stylePreviews = new StylePreviews(maps, styles);
  // Before the registry listens, so that the first instance to register loads the pinned projects.
  const projectFleet = new ProjectFleet({ instances, registry, repository, pins, log: monitorLog(logger) });
  if (registry && config.monitoringPort !== undefined) {
    closers.add(() => registry.close());
    await registry.start(config.monitoringPort, config.listen.host);
    logger.info(`monitoring port listening on ${config.listen.host}:${registry.port}`);
  }
  const health = new HealthChecks({
    store,
    qgisServerUrl: config.qgisServerUrl,
    schema: DEFAULT_SCHEMA,
    ...(cache && { mapproxy: { url: config.mapproxyUrl } }),
    ...(registry && { registry, monitoringHost: config.listen.host }),
    disks: { folders: writtenFolders(config), minFree: config.minFreeSpace },
    ...(config.apiToken !== undefined && { apiToken: config.apiToken }),
  });
  const metrics = new Metrics({
    registry,
    inventory: async () => {
      const names = await projects.list();
      const counts = await Promise.all(
        names.map((name) =>
          layers.list({ name, schema: DEFAULT_SCHEMA }).then(
            (list) => list.length,
            () => 0,
          ),
        ),
      );
      return { projects: names.length, layers: counts.reduce((sum, count) => sum + count, 0) };
    },
    jobs: () => jobs.list({}),
  });
  const checker = new ProjectChecker({
    repository,
    layers,
    crs,
    projectUrl: (ref) => maps.projectUrl(ref),
    instances,
    fonts,
    styleFiles,
    apiToken: config.apiToken,
  });
  const projectServices = new ProjectServicesService(
    repository,
    crs,
    {
      projectUrl: (ref) => qgisProjectUrl(config.publicOwsUrl ?? config.qgisServerUrl, store, ref),
      address: config.publicOwsUrl === undefined ? 'internal' : 'public',
    },
    cache,
  );
  const publishBodyLimit = config.publishBodyLimit ?? DEFAULT_PUBLISH_BODY_LIMIT;
  const archives = new ProjectArchives({
    repository,
    layers,
    checker,
    dataRoots,
    uploads,
    bodyLimit: publishBodyLimit,
    lifecycle: cache,
  });
  const dataFiles = new DataFiles(config.uploadRoot, repository, layers, publishBodyLimit);
  return {
    projects,
    summaries: new ProjectSummaries(repository, pins),
    archives,
    publishBodyLimit,
    dataFiles,
    layers,
    trees: new LayerTreeService(repository),
    layerProperties: new LayerPropertiesService(repository, crs, cache),
    datasourceRepair: new DatasourceRepair(repository, layers, crs, cache),
    projectServices,
    features: new FeatureQueries(maps, layers, projectServices),
    fieldQueries: new FieldQueries(layers),
    checker,
    projectFleet,
    pins,
    health,
    metrics,
    maps,
    styles,
    styleDocuments,
    stylePackages,
    sldStyles,
    stylePreviews,
    styleBodyLimit: config.styleBodyLimit,
    uploadBudget: config.uploadBudget,
    qgis,
    processing,
    registry: instances,
    cache,
    // MapProxy's capabilities, listed by layer for those who may not read every layer (docs/access.md).
    tileCapabilities:
      cache && config.mapproxyUrl !== undefined ? new MapProxyCapabilities(config.mapproxyUrl) : undefined,
    reseeder: cache && new Reseeder(cache, jobs),
    datasources: new DatasourceBrowser(dataRoots, crs),
    imports: new PostgresImports(providers, dataFiles, crs, jobs, config.pgServiceFiles),
    jobs,
    history: new HistoryService(repository, layers),
    access,
    recentLog,
    settings: serverSettings(config, publishBodyLimit),
    server: {
      storage: store.kind,
      cache: cache ? 'mapproxy' : 'disabled',
      monitoring: registry !== undefined,
      data_roots: config.dataRoots ?? [],
      object_storage: objectStorageConfigured(config.s3),
      ...(config.psqlService !== undefined && { database_service: config.psqlService }),
      basemaps: config.basemaps ?? [],
    },
    close: () => closers.closeAll(),
  };
}
