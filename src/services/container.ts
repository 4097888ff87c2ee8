import { type FastifyBaseLogger, type FastifyPluginAsync } from 'fastify';
import { createTileCache } from '../cache/factory.js';
import { type Config } from '../config.js';
import { CrsResolver } from '../gdal/crs.js';
import { configureGdalMemory } from '../gdal/gdal-memory.js';
import { configureObjectStorage } from '../gdal/s3.js';
import { type EarlyHandler } from '../http/app.js';
import { mapPassthrough } from '../http/map-passthrough.js';
import { cacheRoutes } from '../http/routes/cache.js';
import { instanceRoutes } from '../http/routes/instances.js';
import { layerRoutes } from '../http/routes/layers.js';
import { processingRoutes } from '../http/routes/processing.js';
import { projectRoutes } from '../http/routes/projects.js';
import { styleRoutes } from '../http/routes/styles.js';
import { symbologyRoutes } from '../http/routes/symbology.js';
import { InstanceRegistry } from '../monitor/registry.js';
import { loadSymbologyCatalogue, type SymbologyCatalogue } from '../qgis/symbology/catalogue.js';
import { localQgisVersion } from '../runtime/qgis-version.js';
import { FilesystemStore } from '../storage/filesystem-store.js';
import { type PostgresStore } from '../storage/postgres-store.js';
import { DataRoots } from './data-roots.js';
import { LayerInspector } from './layer-inspector.js';
import { LayerService } from './layers.js';
import { MapService } from './maps.js';
import { ProcessingService } from './processing.js';
import { ProjectService } from './projects.js';
import { ProjectRepository } from './repository.js';
import { StyleFiles } from './style-files.js';
import { StyleService } from './styles.js';

export interface Services {
  routes: FastifyPluginAsync[];
  /** Requests served ahead of the routes: maps, whose latency counts against QGIS Server's. */
  beforeRouting: EarlyHandler;
  close(): Promise<void>;
}

async function startMonitoring(config: Config, logger: FastifyBaseLogger): Promise<InstanceRegistry | undefined> {
  if (config.monitoringPort === undefined) return undefined;
  const registry = new InstanceRegistry({
    token: config.monitoringToken,
    log: { info: (message) => logger.info(message), warn: (message) => logger.warn(message) },
  });
  await registry.start(config.monitoringPort, config.listen.host);
  logger.info(`monitoring port listening on ${config.listen.host}:${registry.port}`);
  return registry;
}

/** Loaded only with database support: the PostgreSQL client is a large part of the API's memory. */
async function openPostgresStore(service: string, projectsDir: string): Promise<PostgresStore> {
  const { PostgresStore } = await import('../storage/postgres-store.js');
  return PostgresStore.open(service, projectsDir);
}

async function symbologyCatalogue(logger: FastifyBaseLogger): Promise<SymbologyCatalogue> {
  const version = (await localQgisVersion()) ?? 'unknown';
  const catalogue = await loadSymbologyCatalogue(version);
  if (catalogue.fellBack) {
    logger.warn(`no symbology catalogue for QGIS ${version}: using the newest one, for QGIS ${catalogue.qgisVersion}`);
  }
  return catalogue;
}

/** Builds every service from the configuration and returns the routes that serve them. */
export async function createServices(config: Config, logger: FastifyBaseLogger): Promise<Services> {
  configureGdalMemory();
  const objectStorage = configureObjectStorage();
  if (objectStorage.length > 0) logger.info(`object storage settings for GDAL: ${objectStorage.join(', ')}`);
  const crs = new CrsResolver();
  const postgres = config.psqlService === undefined ? undefined : await openPostgresStore(config.psqlService, config.projectsDir);
  // Project cache refresh: QGIS Server 3.22 keeps a database project cached until told; `registry` is made below.
  const store = postgres ?? new FilesystemStore(config.projectsDir);
  const cleared = await store.clearLeftovers();
  if (cleared > 0) logger.info(`cleared ${cleared} leftovers of writes interrupted by a stopped process`);
  const repository = new ProjectRepository(store, {
    onChanged: postgres && (async (ref) => registry?.invalidateProject(await postgres.mapParameter(ref))),
  });
  // Tile cache (issue 5): undefined unless STEWARD_MAPPROXY_PROJECTS_DIR is set; `maps` is made below.
  const tileCache = await createTileCache(config, repository, (ref) => maps.projectUrl(ref));
  const cache = tileCache?.service;
  const projects = new ProjectService(repository, crs, { cacheEnabled: cache !== undefined, lifecycle: cache });
  const inspector = new LayerInspector(crs);
  const styleFiles = new StyleFiles(repository.store);
  const dataRoots = await DataRoots.create(config.dataRoots);
  const layers = new LayerService(repository, crs, inspector, dataRoots, styleFiles, cache);
  const processing = new ProcessingService(
    {
      findLayer: (project, layer, schema) => layers.source(projects.ref(project, schema), layer),
      listLayers: (project, schema) => layers.sources(projects.ref(project, schema)),
    },
    dataRoots,
  );
  const maps = new MapService(config.qgisServerUrl, repository, layers);
  const catalogue = await symbologyCatalogue(logger);
  const styles = new StyleService(repository, layers, inspector, styleFiles, catalogue, cache);
  const registry = await startMonitoring(config, logger);
  return {
    beforeRouting: mapPassthrough(projects, maps, logger),
    routes: [
      projectRoutes(projects),
      layerRoutes(projects, layers, maps),
      styleRoutes(projects, styles),
      symbologyRoutes(catalogue),
      processingRoutes(processing),
      instanceRoutes(registry),
      cacheRoutes(projects, cache),
    ],
    close: async () => {
      await registry?.close();
      await postgres?.close();
      tileCache?.close();
      maps.close();
    },
  };
}
