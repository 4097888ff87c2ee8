/**
 * The version of the QGIS Server Steward administers, and the symbology catalogue that goes with
 * it. Sources, first that knows: the STEWARD_QGISSERVER_VERSION setting, the trusted instances'
 * monitoring plugin (each says its version in its hello), and last the local `qgis_mapserver`.
 * Every version is carried as `major.minor.patch` in ASCII: it goes into response headers.
 */
import {
  type CatalogueChoice,
  type SymbologyCatalogue,
  type SymbologyCatalogues,
} from '../qgis/symbology/catalogue.js';
import { compareQgisVersions } from '../qgis/version.js';

export type QgisVersionSource = 'plugin' | 'setting' | 'local binary' | 'unknown';

export interface AdministeredVersion {
  /** `3.40.6` or `3.40`; undefined when no source knows it. */
  version: string | undefined;
  source: QgisVersionSource;
}

export type SymbologyChoice = AdministeredVersion & CatalogueChoice;

export interface VersionSources {
  /** The QGIS versions the trusted instances gave, `3.40.6` (absent when monitoring is off). */
  instances?: { qgisVersions(): string[] } | undefined;
  /** STEWARD_QGISSERVER_VERSION, `3.40` or `3.44.15`. */
  setting?: string | undefined;
  /** The local binary's version, asked once and only when there is no setting. */
  local: () => Promise<string | undefined>;
}

export class AdministeredQgis {
  private constructor(
    private readonly catalogues: SymbologyCatalogues,
    private readonly instances: VersionSources['instances'],
    private readonly configured: AdministeredVersion,
  ) {}

  static async create(catalogues: SymbologyCatalogues, sources: VersionSources): Promise<AdministeredQgis> {
    let configured: AdministeredVersion = { version: sources.setting, source: 'setting' };
    if (sources.setting === undefined) {
      const local = await sources.local();
      configured =
        local === undefined ? { version: undefined, source: 'unknown' } : { version: local, source: 'local binary' };
    }
    return new AdministeredQgis(catalogues, sources.instances, configured);
  }

  /**
   * The administered version now: the setting's, else, with trusted instances of several
   * versions, the oldest one (what Steward writes for it loads on the newer ones too), else the
   * local binary's.
   */
  version(): AdministeredVersion {
    if (this.configured.source === 'setting') return this.configured;
    const reported = this.instances?.qgisVersions() ?? [];
    const oldest = [...reported].sort(compareQgisVersions)[0];
    return oldest === undefined ? this.configured : { version: oldest, source: 'plugin' };
  }

  symbology(): SymbologyChoice {
    const version = this.version();
    return { ...version, ...this.catalogues.select(version.version) };
  }

  /** The catalogue of the administered version, for the style codec. */
  catalogue(): SymbologyCatalogue {
    return this.symbology().catalogue;
  }
}
