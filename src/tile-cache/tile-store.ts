import { type YamlMapping } from './yaml.js';

/** What a layer's cached tiles take: how many, and their bytes (their files' sizes, or their objects'). */
export interface TileUsage {
  tiles: number;
  bytes: number;
}

/** Where MapProxy keeps a project's tiles, how Steward empties them and measures them. */
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
  /** Counts the layer's cached tiles and their bytes. */
  usage(app: string, layer: string): Promise<TileUsage>;
}
