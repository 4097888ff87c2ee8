import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

import { type CacheLayout } from './layout.js';
import { removeDir } from './remove-dir.js';
import { type TileStore, type TileUsage } from './tile-store.js';
import { type YamlMapping } from './yaml.js';

/** Tiles as files: one folder per layer, `z/x/y.png` inside (MapProxy's `tms` layout). */
export class FilesystemTiles implements TileStore {
  readonly kind = 'filesystem' as const;
  readonly supportsDimensions = true;

  constructor(private readonly layout: CacheLayout) {}

  cacheOptions(app: string, layer: string): YamlMapping {
    return { type: 'file', directory: this.layout.layerDir(app, layer), directory_layout: 'tms' };
  }

  globalCacheOptions(): YamlMapping {
    return {};
  }

  clearLayer(app: string, layer: string): Promise<void> {
    return removeDir(this.layout.layerDir(app, layer));
  }

  clearLevel(app: string, layer: string, level: number): Promise<void> {
    return removeDir(join(this.layout.layerDir(app, layer), String(level)));
  }

  clearProject(app: string): Promise<void> {
    return removeDir(this.layout.projectDir(app));
  }

  async usage(app: string, layer: string): Promise<TileUsage> {
    const entries = await readdir(this.layout.layerDir(app, layer), { recursive: true, withFileTypes: true }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [];
        throw error;
      },
    );
    const files = entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
    let bytes = 0;
    // A few at a time: a layer may have hundreds of thousands of tiles.
    for (let start = 0; start < files.length; start += STAT_BATCH) {
      const sizes = await Promise.all(
        files.slice(start, start + STAT_BATCH).map((file) =>
          lstat(file).then(
            ({ size }) => size,
            () => 0,
          ),
        ),
      );
      bytes += sizes.reduce((sum, size) => sum + size, 0);
    }
    return { tiles: files.length, bytes };
  }
}

/** Files whose sizes are asked for at once. */
const STAT_BATCH = 64;
