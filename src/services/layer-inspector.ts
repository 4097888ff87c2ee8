import { type CrsResolver } from '../gdal/crs.js';
import { type GdalSource, gdalSourceKey } from '../gdal/datasource.js';
import { type Probed, probeDatasource } from '../gdal/probe.js';
import { type LayerType } from '../qgis/layer.js';
import { fileVersion } from '../storage/file-version.js';
import { LruCache } from './project-cache.js';

/** How long the probe of a remote datasource (object storage, database) is trusted. */
const REMOTE_PROBE_TTL_MS = 30_000;
/**
 * Inspections remembered, the least recently used dropped first: enough for the layers of a few
 * projects of a thousand layers read in turn, in a few MB (docs/project-edits.md).
 */
const MAX_REMEMBERED_INSPECTIONS = 4096;

export interface Inspection {
  valid: boolean;
  /** Why the datasource cannot be read, when it cannot. */
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
  /** Each entry counts as one against the bound, a count of entries. */
  bytes: 1;
}

/** The local file of a source, or undefined for a remote one. */
function localFile(source: GdalSource): string | undefined {
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

/** A datasource's remembered inspection when still current, and the file and version to remember a new one under. */
interface Recalled {
  file: string | undefined;
  version: string;
  inspection: Inspection | undefined;
}

/**
 * Probes layer datasources for what the project does not record (validity, bands, pixel type),
 * remembering each result until a local file changes, a remote one's probe ages, or it is the least
 * recently used of more than the bound (MAX_REMEMBERED_INSPECTIONS unless told). A layer's
 * metadata is read on every GET: a remembered inspection costs one stat of its file.
 */
export class LayerInspector {
  private readonly memo: LruCache<Remembered>;

  constructor(
    private readonly crs: CrsResolver,
    maxRemembered = MAX_REMEMBERED_INSPECTIONS,
  ) {
    this.memo = new LruCache(maxRemembered);
  }

  /** The source's inspection; `fresh` probes it again even when a remembered one is current. */
  async inspect(source: GdalSource, type: LayerType, fresh = false): Promise<Inspection> {
    const key = memoKey(source, type);
    const recalled = this.recall(key, source);
    if (recalled.inspection && !fresh) return recalled.inspection;
    let inspection: Inspection;
    try {
      inspection = { valid: true, probed: await probeDatasource(source, type, this.crs) };
    } catch (error) {
      inspection = { valid: false, reason: error instanceof Error ? error.message : String(error) };
    }
    this.remember(key, recalled, inspection);
    return inspection;
  }

  /**
   * The probe of a datasource a new layer is made of: a local file's remembered one while the file
   * is unchanged, else probed now (a remote datasource always is, as what a layer records of it
   * stays); throws what `probeDatasource` throws.
   */
  async probe(source: GdalSource, type: LayerType): Promise<Probed> {
    const key = memoKey(source, type);
    const recalled = this.recall(key, source);
    if (recalled.file !== undefined && recalled.inspection?.probed) return recalled.inspection.probed;
    const probed = await probeDatasource(source, type, this.crs);
    this.remember(key, recalled, { valid: true, probed });
    return probed;
  }

  private recall(key: string, source: GdalSource): Recalled {
    const remembered = this.memo.get(key);
    const file = remembered ? remembered.file : localFile(source);
    // Read before any probe: a file changed during the probe is then probed again next time.
    const version = versionOf(file);
    const current =
      remembered && remembered.version === version && (file !== undefined || remembered.expires > Date.now());
    return { file, version, inspection: current ? remembered.inspection : undefined };
  }

  private remember(key: string, { file, version }: Recalled, inspection: Inspection): void {
    const expires = file === undefined ? Date.now() + REMOTE_PROBE_TTL_MS : Number.POSITIVE_INFINITY;
    this.memo.set(key, { file, version, expires, inspection, bytes: 1 });
  }
}

function memoKey(source: GdalSource, type: LayerType): string {
  return `${type}\u0000${gdalSourceKey(source)}`;
}
