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

interface Remembered {
  /** The local file whose version the inspection holds for; undefined for a remote datasource. */
  file: string | undefined;
  version: string;
  /** When a remote datasource's inspection ages (never for a local file, which its version covers). */
  expires: number;
  inspection: Inspection;
}

/** The local file of a datasource, or undefined for a remote one. */
function localFile(datasource: string): string | undefined {
  const source = parseDatasource(datasource);
  return source.kind === 'file' ? source.gdalPath : undefined;
}

function versionOf(file: string | undefined): string {
  if (file === undefined) return 'remote';
  try {
    return fileVersion(file) ?? 'missing';
  } catch {
    return 'missing';
  }
}

/**
 * Probes layer datasources for what the project does not record (validity, bands, pixel type),
 * remembering each result until a local file changes or a remote one's probe ages. A layer's
 * metadata is read on every GET: a remembered inspection costs one stat of its file and no parse
 * of its datasource.
 */
export class LayerInspector {
  private readonly memo = new Map<string, Remembered>();

  constructor(private readonly crs: CrsResolver) {}

  async inspect(datasource: string, type: LayerType): Promise<Inspection> {
    const key = `${type}\u0000${datasource}`;
    const remembered = this.memo.get(key);
    const file = remembered ? remembered.file : localFile(datasource);
    const version = versionOf(file);
    if (remembered && remembered.version === version && (file !== undefined || remembered.expires > Date.now())) {
      return remembered.inspection;
    }
    let inspection: Inspection;
    try {
      inspection = { valid: true, probed: await probeDatasource(datasource, type, this.crs) };
    } catch (error) {
      inspection = { valid: false, reason: error instanceof Error ? error.message : String(error) };
    }
    const expires = file === undefined ? Date.now() + REMOTE_PROBE_TTL_MS : Number.POSITIVE_INFINITY;
    this.memo.set(key, { file, version, expires, inspection });
    return inspection;
  }
}
