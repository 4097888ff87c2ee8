import { createHash } from 'node:crypto';
import { join } from 'node:path';

/**
 * Longest segment kept whole: file names have at most 255 bytes, and the folder removal renames a
 * segment to `.deleting-<segment>-<uuid>`, 47 bytes longer.
 */
const MAX_SEGMENT_BYTES = 200;
/** Code points of a too long segment kept before its hash, at most 4 bytes each. */
const KEPT_CODE_POINTS = 32;

/**
 * A name made safe as one path segment (a folder or an S3 key part): `/`, `\`, `%` and control
 * characters are percent-encoded, and so is a leading dot, so `..` cannot climb. Names that need
 * none of this are kept as they are; the mapping is one-to-one. A segment that would be too long
 * for a file name (percent-encoding triples a `%`; QGIS puts no limit on layer names) becomes its
 * beginning and the SHA-256 of the whole name.
 */
export function pathSegment(name: string): string {
  const encoded = name.replace(
    /[/\\%\u0000-\u001f\u007f]/g,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  const segment = encoded.startsWith('.') ? `%2E${encoded.slice(1)}` : encoded;
  if (Buffer.byteLength(segment) <= MAX_SEGMENT_BYTES) return segment;
  const beginning = Array.from(segment).slice(0, KEPT_CODE_POINTS).join('');
  return `${beginning}~${createHash('sha256').update(name).digest('hex')}`;
}

/**
 * Where a project's cache lives on this machine. `mapproxy-util serve-multiapp-develop <dir>`
 * serves each `<dir>/<app>.yaml` at `/<app>/`; tiles of the filesystem cache go to
 * `<dir>/cache_data/<app>/<layer>/`, and MapProxy's own files (legends, locks) to the hidden
 * `.mapproxy` folder beside them, which no layer name can collide with.
 */
export class CacheLayout {
  constructor(readonly configDir: string) {}

  configFile(app: string): string {
    return join(this.configDir, `${app}.yaml`);
  }

  /** Everything cached on disk for the project. */
  projectDir(app: string): string {
    return join(this.configDir, 'cache_data', pathSegment(app));
  }

  layerDir(app: string, layer: string): string {
    return join(this.projectDir(app), pathSegment(layer));
  }

  /** MapProxy's `globals.cache.base_dir`: it keeps cached legends in `legends/` there. */
  mapproxyDir(app: string): string {
    return join(this.projectDir(app), '.mapproxy');
  }

  legendDir(app: string): string {
    return join(this.mapproxyDir(app), 'legends');
  }

  /** A seed configuration for `mapproxy-seed`, in a hidden folder MapProxy's server does not read. */
  seedFile(app: string, id: string): string {
    return join(this.configDir, '.seeds', `${pathSegment(app)}-${id}.yaml`);
  }

  lockFile(app: string): string {
    return join(this.configDir, '.locks', `${pathSegment(app)}.lock`);
  }
}
