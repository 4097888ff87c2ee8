import { type Config } from '../config.js';
import { s3Environment } from '../s3-settings.js';
import { type ProjectRepository } from '../services/repository.js';
import { type ProjectRef } from '../storage/project-store.js';
import { FilesystemTiles } from './filesystem-tiles.js';
import { CacheLayout } from './layout.js';
import { TileCacheService } from './service.js';
import { validateWithMapProxy } from './validate.js';

export interface TileCache {
  service: TileCacheService;
  close(): void;
}

type CacheConfig = Pick<Config, 'mapproxyProjectsDir' | 'cacheS3Bucket' | 's3' | 'cacheS3Dir'>;

/**
 * The tile cache the configuration asks for: none without `STEWARD_MAPPROXY_PROJECTS_DIR`, tiles
 * on S3 with `STEWARD_MAPPROXY_CACHE_S3_BUCKET` (endpoint and credentials from `src/s3-settings.ts`),
 * on disk otherwise. The S3 client is loaded only then: it is a large part of the API's memory.
 */
export async function createTileCache(
  config: CacheConfig,
  repository: ProjectRepository,
  projectUrl: (ref: ProjectRef) => Promise<URL>,
  qgisToken?: string,
): Promise<TileCache | undefined> {
  if (config.mapproxyProjectsDir === undefined) return undefined;
  const env = s3Environment(config.s3);
  const layout = new CacheLayout(config.mapproxyProjectsDir);
  const s3 =
    config.cacheS3Bucket === undefined
      ? undefined
      : new (await import('./s3-tiles.js')).S3Tiles({
          bucket: config.cacheS3Bucket,
          directory: config.cacheS3Dir,
          endpoint: config.s3.endpoint,
          pathStyle: config.s3.pathStyle,
        });
  const service = new TileCacheService({
    layout,
    tiles: s3 ?? new FilesystemTiles(layout),
    repository,
    projectUrl,
    validate: (file) => validateWithMapProxy(file, env),
    env,
    qgisToken,
  });
  return { service, close: () => s3?.close() };
}
