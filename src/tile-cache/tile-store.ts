import { type YamlMapping } from './yaml.js';

/** Where MapProxy keeps a project's tiles, and how Steward empties them. */
export interface TileStore {
  readonly kind: 'filesystem' | 's3';
  /** MapProxy caches tiles per dimension value only on the filesystem (MapProxy 1.15). */
  readonly supportsDimensions: boolean;
  /** The `cache:` member of the layer's MapProxy cache. */
  cacheOptions(app: string, layer: string): YamlMapping;
  /** Members this storage adds to `globals.cache`. */
  globalCacheOptions(): YamlMapping;
  /** Deletes every cached tile of the layer. */
  clearLayer(app: string, layer: string): Promise<void>;
  /** Deletes the cached tiles of one level of the layer. */
  clearLevel(app: string, layer: string, level: number): Promise<void>;
  /** Deletes every cached tile of the project. */
  clearProject(app: string): Promise<void>;
}
