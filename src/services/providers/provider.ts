/**
 * Layer datasource providers, one per QGIS provider key, as QGIS has them (`QgsProviderRegistry`):
 * each parses, checks, describes and rewrites the datasources of its own kind.
 */
import { type GdalSource } from '../../gdal/datasource.js';
import { type Probed } from '../../gdal/probe.js';
import { type CrsDefinition } from '../../qgis/crs.js';
import { type LayerType } from '../../qgis/layer.js';

/** What a provider knows of the layer besides its datasource. */
export interface SourceContext {
  type: LayerType;
  /** The project file's folder, which relative paths resolve against; undefined for a project in a database. */
  projectDir: string | undefined;
  /** Read the source now rather than trust what was read of it a moment ago (a project check). */
  fresh?: boolean;
}

/** Whether a stored layer can be read, as QGIS would find it. */
export interface SourceState {
  valid: boolean;
  /** Why it cannot, passwords masked. */
  reason?: string;
  /** What GDAL read of it, for sources GDAL reads. */
  probed?: Probed;
}

/** A new layer's datasource, checked: what it is and what to store. */
export interface PreparedSource {
  provider: string;
  probed: Probed;
  /** The datasource to write, as QGIS writes it for the layer's CRS. */
  datasource(crs: CrsDefinition): string;
}

export interface Provider {
  /** The QGIS provider key (`ogr`, `gdal`, `postgres`, ...). */
  readonly key: string;
  /** The datasource as an answer, a log line or a check message may show it: passwords masked. */
  describe(datasource: string): string;
  /** Whether the layer can be read; never throws for a source that is merely broken. */
  inspect(datasource: string, context: SourceContext): Promise<SourceState>;
  /**
   * Refuses (Forbidden) a stored layer whose source reads outside the data folders, checked again
   * before Steward has QGIS Server draw it; sources of no file pass.
   */
  confine(datasource: string, context: SourceContext): Promise<void>;
  /** What GDAL opens for the layer (processing, raster statistics); undefined when GDAL does not read it. */
  gdalSource(datasource: string, context: SourceContext): GdalSource | undefined;
}

/** A provider whose layers can be added through the API. */
export interface LayerMaker extends Provider {
  /** Whether a new layer's datasource is of this provider. */
  claims(datasource: string, type: LayerType): boolean;
  /**
   * Checks a new layer's datasource as QGIS will read it: BadRequest for one it cannot parse,
   * Forbidden outside the data folders, Unprocessable for one it cannot open or would refuse.
   */
  prepare(datasource: string, type: LayerType): Promise<PreparedSource>;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
