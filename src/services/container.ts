import { type FastifyPluginAsync } from 'fastify';
import { type Config } from '../config.js';
import { CrsResolver } from '../gdal/crs.js';
import { layerRoutes } from '../http/routes/layers.js';
import { projectRoutes } from '../http/routes/projects.js';
import { FilesystemStore } from '../storage/filesystem-store.js';
import { LayerInspector } from './layer-inspector.js';
import { LayerService } from './layers.js';
import { MapService } from './maps.js';
import { ProjectService } from './projects.js';
import { ProjectRepository } from './repository.js';

/** Builds every service from the configuration and returns the routes that serve them. */
export async function createServices(config: Config): Promise<{ routes: FastifyPluginAsync[]; close: () => Promise<void> }> {
  const crs = new CrsResolver();
  const repository = new ProjectRepository(new FilesystemStore(config.projectsDir));
  const projects = new ProjectService(repository, crs, { cacheEnabled: config.mapproxyProjectsDir !== undefined });
  const layers = new LayerService(repository, crs, new LayerInspector(crs));
  const maps = new MapService(config.qgisServerUrl, repository, layers);
  return {
    routes: [projectRoutes(projects), layerRoutes(projects, layers, maps)],
    close: async () => undefined,
  };
}
