import { type CrsResolver } from '../gdal/crs.js';
import { parseDatasource } from '../gdal/datasource.js';
import { type Probed, probeDatasource } from '../gdal/probe.js';
import { type LayerType } from '../qgis/layer.js';
import { fileVersion } from '../storage/file-version.js';

/** How long the probe of a remote datasource (object storage, database) is trusted. */
const REMOTE_PROBE_TTL_MS = 30_000;

interface Inspection {
  valid: boolean;
  /** Why GDAL could not open the datasource, when it could not. */
  reason?: string;
  probed?: Probed;
}

/**
 * Probes layer datasources for what the project does not record (validity, bands, pixel type),
 * remembering each result until a local file changes or a remote one's probe ages.
 */
export class LayerInspector {
  private readonly memo = new Map<string, { version: string; expires: number; inspection: Inspection }>();

  constructor(private readonly crs: CrsResolver) {}

  private version(datasource: string): string {
    const source = parseDatasource(datasource);
    if (source.kind !== 'file') return 'remote';
    try {
      return fileVersion(source.gdalPath) ?? 'missing';
    } catch {
      return 'missing';
    }
  }

  async inspect(datasource: string, type: LayerType): Promise<Inspection> {
    const key = `${type}\u0000${datasource}`;
    const version = this.version(datasource);
    const remembered = this.memo.get(key);
    if (remembered && remembered.version === version && remembered.expires > Date.now()) return remembered.inspection;
    let inspection: Inspection;
    try {
      inspection = { valid: true, probed: await probeDatasource(datasource, type, this.crs) };
    } catch (error) {
      inspection = { valid: false, reason: error instanceof Error ? error.message : String(error) };
    }
    const ttl = version === 'remote' ? REMOTE_PROBE_TTL_MS : Number.POSITIVE_INFINITY;
    this.memo.set(key, { version, expires: Date.now() + ttl, inspection });
    return inspection;
  }
}
