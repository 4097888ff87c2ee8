/**
 * The version of the QGIS Server Steward administers, and the symbology catalogue that goes with
 * it. Sources, first that knows: the instances' monitoring plugin (each says Qgis.QGIS_VERSION in
 * its hello), the STEWARD_QGISSERVER_VERSION setting, and last the local `qgis_mapserver`.
 */
import {
  type CatalogueChoice,
  type SymbologyCatalogue,
  type SymbologyCatalogues,
} from '../qgis/symbology/catalogue.js';

export type QgisVersionSource = 'plugin' | 'setting' | 'local binary' | 'unknown';

export interface AdministeredVersion {
  /** As its source gives it, e.g. `3.40.6-Bratislava`; undefined when no source knows it. */
  version: string | undefined;
  source: QgisVersionSource;
}

export type SymbologyChoice = AdministeredVersion & CatalogueChoice;

export interface VersionSources {
  /** The QGIS versions the registered instances gave (absent when monitoring is off). */
  instances?: { qgisVersions(): string[] } | undefined;
  /** STEWARD_QGISSERVER_VERSION. */
  setting?: string | undefined;
  /** The local binary's version, asked once and only when there is no setting. */
  local: () => Promise<string | undefined>;
}

/** Orders `3.40.6-Bratislava` before `3.44.1`, by the numbers of major.minor.patch. */
function compareVersions(a: string, b: string): number {
  const numbers = (text: string) => (/^(\d+)\.(\d+)(?:\.(\d+))?/.exec(text) ?? []).slice(1).map((n) => Number(n ?? 0));
  const [x, y] = [numbers(a), numbers(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

export class AdministeredQgis {
  private constructor(
    private readonly catalogues: SymbologyCatalogues,
    private readonly instances: VersionSources['instances'],
    private readonly fallback: AdministeredVersion,
  ) {}

  static async create(catalogues: SymbologyCatalogues, sources: VersionSources): Promise<AdministeredQgis> {
    let fallback: AdministeredVersion = { version: sources.setting, source: 'setting' };
    if (sources.setting === undefined) {
      const local = await sources.local();
      fallback =
        local === undefined ? { version: undefined, source: 'unknown' } : { version: local, source: 'local binary' };
    }
    return new AdministeredQgis(catalogues, sources.instances, fallback);
  }

  /**
   * The administered version now. With instances of several versions, the oldest one: what
   * Steward writes for it loads on the newer ones too.
   */
  version(): AdministeredVersion {
    const reported = this.instances?.qgisVersions() ?? [];
    const oldest = [...reported].sort(compareVersions)[0];
    return oldest === undefined ? this.fallback : { version: oldest, source: 'plugin' };
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
