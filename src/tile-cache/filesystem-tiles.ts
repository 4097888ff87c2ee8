import { join } from 'node:path';

import { type CacheLayout } from './layout.js';
import { removeDir } from './remove-dir.js';
import { type TileStore } from './tile-store.js';
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
}
