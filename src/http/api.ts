import { type AccessService } from '../access/service.js';
import { type ProjectChecker } from '../insight/checks.js';
import { type HealthChecks } from '../insight/health.js';
import { type Metrics } from '../insight/metrics.js';
import { type ProjectFleet } from '../insight/project-fleet.js';
import { type JobService } from '../jobs/service.js';
import { type RecentLog } from '../log.js';
import { type InstanceDirectory } from '../monitor/registry.js';
import { type AdministeredQgis } from '../services/administered-qgis.js';
import { type DataFiles } from '../services/data-files.js';
import { type DatasourceRepair } from '../services/datasource-repair.js';
import { type DatasourceBrowser } from '../services/datasources.js';
import { type FeatureQueries } from '../services/feature-queries.js';
import { type FieldQueries } from '../services/field-queries.js';
import { type HistoryService } from '../services/history.js';
import { type LayerPropertiesService } from '../services/layer-properties.js';
import { type LayerTreeService } from '../services/layer-tree.js';
import { type LayerService } from '../services/layers.js';
import { type MapService } from '../services/maps.js';
import { type ProjectPins } from '../services/pins.js';
import { type PostgresImports } from '../services/postgres-import.js';
import { type ProcessingService } from '../services/processing.js';
import { type ProjectArchives } from '../services/project-archives.js';
import { type ProjectServicesService } from '../services/project-services.js';
import { type ProjectSummaries } from '../services/project-summaries.js';
import { type ProjectService } from '../services/projects.js';
import { type SldStyles } from '../services/sld-styles.js';
import { type StyleDocuments } from '../services/style-documents.js';
import { type StylePackages } from '../services/style-packages.js';
import { type StylePreviews } from '../services/style-previews.js';
import { type StyleService } from '../services/styles.js';
import { type MapProxyCapabilities } from '../tile-cache/capabilities.js';
import { type Reseeder } from '../tile-cache/reseed.js';
import { type TileCacheService } from '../tile-cache/service.js';
import { consoleRoutes } from './console.js';
import { type RouteModule } from './route-module.js';
import { accessRoutes } from './routes/access.js';
import { cacheRoutes } from './routes/cache.js';
import { checkRoutes } from './routes/checks.js';
import { dataFileRoutes } from './routes/data-files.js';
import { datasourceRoutes } from './routes/datasources.js';
import { healthRoutes } from './routes/health.js';
import { historyRoutes } from './routes/history.js';
import { instanceRoutes } from './routes/instances.js';
import { jobRoutes } from './routes/jobs.js';
import { layerFeatureRoutes } from './routes/layer-features.js';
import { layerPropertiesRoutes } from './routes/layer-properties.js';
import { layerTreeRoutes } from './routes/layer-tree.js';
import { layerRoutes, layerSummaryRoutes } from './routes/layers.js';
import { logRoutes } from './routes/log.js';
import { owsAuthRoutes } from './routes/ows-auth.js';
import { processingRoutes } from './routes/processing.js';
import { projectArchiveRoutes } from './routes/project-archives.js';
import { fleetRoutes } from './routes/project-fleet.js';
import { projectMapRoutes } from './routes/project-map.js';
import { projectServicesRoutes } from './routes/project-services.js';
import { projectSummaryRoutes } from './routes/project-summaries.js';
import { projectRoutes } from './routes/projects.js';
import { type ServerFacts, serverRoutes, type ServerSettings } from './routes/server.js';
import { styleRoutes } from './routes/styles.js';
import { symbologyRoutes } from './routes/symbology.js';

/** What the API serves; the features that are off (monitoring, tile cache) are undefined. */
export interface ApiServices {
  projects: ProjectService;
  /** The projects of a schema as a listing shows them. */
  summaries: ProjectSummaries;
  /** Projects in and out as QGIS Desktop has them, with their data. */
  archives: ProjectArchives;
  /** Bytes a project or data file upload may have (STEWARD_PUBLISH_BODY_LIMIT). */
  publishBodyLimit: number;
  /** Data files in the upload root. */
  dataFiles: DataFiles;
  layers: LayerService;
  trees: LayerTreeService;
  layerProperties: LayerPropertiesService;
  /** Layers' datasources changed in place. */
  datasourceRepair: DatasourceRepair;
  /** What QGIS Server publishes of each project, by service. */
  projectServices: ProjectServicesService;
  maps: MapService;
  /** Features under a pixel of a map, and a layer's a page at a time. */
  features: FeatureQueries;
  /** A vector layer's fields, and a field's values over every feature. */
  fieldQueries: FieldQueries;
  styles: StyleService;
  styleDocuments: StyleDocuments;
  stylePackages: StylePackages;
  /** Styles uploaded as SLD, read by QGIS Server's plugin. */
  sldStyles: SldStyles;
  /** Views drawn with a style not stored, by QGIS Server's plugin. */
  stylePreviews: StylePreviews;
  /** Bytes a style upload may have (the other routes keep the app's limit). */
  styleBodyLimit: number;
  /** Bytes of style uploads worked on at once (STEWARD_UPLOAD_BUDGET); past them uploads get 503. */
  uploadBudget: number;
  /** The administered QGIS Server version and its symbology catalogue. */
  qgis: AdministeredQgis;
  processing: ProcessingService;
  /** The instances of this process, or of every process of the fleet when they share a database. */
  registry: InstanceDirectory | undefined;
  cache: TileCacheService | undefined;
  /** MapProxy's capabilities listed by layer, when the tile cache is on and STEWARD_MAPPROXY_URL set. */
  tileCapabilities: MapProxyCapabilities | undefined;
  /** Seeds layers again after their style changed, when the tile cache is on. */
  reseeder: Reseeder | undefined;
  datasources: DatasourceBrowser;
  /** Vector layers copied into PostGIS tables, as jobs. */
  imports: PostgresImports;
  checker: ProjectChecker;
  projectFleet: ProjectFleet;
  pins: ProjectPins;
  health: HealthChecks;
  metrics: Metrics;
  jobs: JobService;
  /** The versions of projects: list, content, differences and restore. */
  history: HistoryService;
  /** Identities, roles and the audit log, enforced when STEWARD_API_TOKEN is set. */
  access: AccessService;
  /** What this server offers, for clients to show only what works. */
  server: ServerFacts;
  /** The settings in effect, for administrators. */
  settings: ServerSettings;
  /** This process's own recent log lines. */
  recentLog: RecentLog;
}

/** Every route of the API, each module under its path prefix, and the web console built in `consoleDir`. */
export function apiRoutes(services: ApiServices, consoleDir: string): RouteModule[] {
  return [
    projectRoutes(services.projects),
    projectSummaryRoutes(services.summaries),
    historyRoutes(services.history),
    projectArchiveRoutes(services),
    dataFileRoutes(services),
    layerRoutes(services.layers, services.maps),
    layerSummaryRoutes(services.layers),
    layerTreeRoutes(services.trees),
    layerPropertiesRoutes(services.layerProperties, services.datasourceRepair),
    projectServicesRoutes(services.projectServices),
    projectMapRoutes(services.maps, services.features, services.stylePreviews),
    layerFeatureRoutes(services.maps, services.features, services.fieldQueries),
    styleRoutes(services),
    symbologyRoutes(() => services.qgis.symbology()),
    processingRoutes(services.processing, services.jobs),
    instanceRoutes(services.registry, () => services.qgis.symbology()),
    cacheRoutes(services.cache, services.jobs),
    datasourceRoutes(services.datasources, services.imports),
    jobRoutes(services.jobs),
    serverRoutes(services.server, services.settings),
    logRoutes(services.recentLog),
    healthRoutes(services.health, services.metrics),
    checkRoutes(services.checker, services.projects),
    fleetRoutes(services.projectFleet, services.pins),
    accessRoutes(services.access),
    owsAuthRoutes(services.maps.store, services.cache, services.tileCapabilities),
    consoleRoutes(consoleDir),
  ];
}
