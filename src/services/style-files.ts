/**
 * Where the SVG files and images a style names may be read from: with data roots, only inside
 * them, QGIS's own SVG folders or the project's folder (where Steward keeps a package's images);
 * on the web, only from the hosts STEWARD_STYLE_REMOTE_HOSTS names, as QGIS Server fetches them
 * from the server itself while it draws.
 */
import { Forbidden } from '../errors.js';
import { QGIS_SVG_PATHS, styleFilePath, type StyleReferences } from '../qgis/style-references.js';
import { type DataRoots } from './data-roots.js';

/** The extensions an image Steward keeps for a style may have: formats QGIS draws as images, nothing GDAL reads as a dataset. */
export const SAFE_IMAGE_EXTENSIONS: ReadonlySet<string> = new Set([
  '.png',
  '.jpg',
  '.jpeg',
  '.gif',
  '.svg',
  '.bmp',
  '.webp',
]);

interface Located {
  path: string;
  searchPaths: readonly string[];
}

export class StyleFiles {
  constructor(
    private readonly dataRoots: DataRoots,
    /** Host names (lower case, `host` or `host:port`) remote files may come from. */
    private readonly remoteHosts: readonly string[],
  ) {}

  /**
   * Whether QGIS Server finds a style's file where it may read it: a file missing and one outside
   * the places allowed are alike not found. SVG files are also looked for in QGIS's SVG folders.
   */
  async found(file: string, kind: 'svg' | 'image', projectDir: string | undefined): Promise<boolean> {
    const located = this.located(file, kind, projectDir);
    return located !== undefined && (await this.allowed(located, projectDir));
  }

  /**
   * Forbidden when drawing a layer with these styles would have QGIS Server read a file outside
   * the places allowed or fetch one from a host not allowed: checked each time Steward has QGIS
   * Server draw a layer, whoever wrote its styles (QGIS Desktop, a project published before the
   * data roots were set). A file missing is nothing read and passes.
   */
  async confine(references: StyleReferences, projectDir: string | undefined): Promise<void> {
    this.checkRemote(references);
    if (this.dataRoots.folders === undefined) return;
    for (const [files, kind] of [
      [references.svg, 'svg'],
      [references.images, 'image'],
    ] as const) {
      for (const file of files) {
        const located = this.located(file, kind, projectDir);
        if (located !== undefined && !(await this.allowed(located, projectDir)))
          throw new Forbidden(`the style names ${file}, which is outside the data folders this server may use`, {
            code: 'outside_data_roots',
          });
      }
    }
  }

  /** Where QGIS reads a style's file, or undefined when it finds none. */
  private located(file: string, kind: 'svg' | 'image', projectDir: string | undefined): Located | undefined {
    const searchPaths = kind === 'svg' ? QGIS_SVG_PATHS : [];
    const path = styleFilePath(file, projectDir, searchPaths);
    return path === undefined ? undefined : { path, searchPaths };
  }

  /** Whether a located file lies in the data roots, the folders it was looked for in or the project's folder. */
  private async allowed({ path, searchPaths }: Located, projectDir: string | undefined): Promise<boolean> {
    if (this.dataRoots.folders === undefined) return true;
    return this.dataRoots.isInside(path, [...searchPaths, ...(projectDir === undefined ? [] : [projectDir])]);
  }

  /** The remote files of a style whose host is not allowed. */
  refusedRemote(references: StyleReferences): string[] {
    return references.remote.filter((url) => {
      try {
        return !this.remoteHosts.includes(new URL(url).host.toLowerCase());
      } catch {
        return true;
      }
    });
  }

  /** Forbidden, naming them, when the style names remote files on hosts not allowed. */
  checkRemote(references: StyleReferences): void {
    const refused = this.refusedRemote(references);
    if (refused.length > 0) {
      throw new Forbidden(
        `the style names files on the web, which QGIS Server would fetch: ${refused.join(', ')} ` +
          '(allow their hosts with STEWARD_STYLE_REMOTE_HOSTS)',
      );
    }
  }
}
