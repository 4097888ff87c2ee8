import { Unprocessable } from '../errors.js';
import { type CrsResolver } from '../gdal/crs.js';
import { wgs84Extent } from '../gdal/probe.js';
import { type CrsDefinition } from '../qgis/crs.js';
import { datasourceFilter, type NewDatasource } from '../qgis/layer-datasource.js';
import { type LayerEntry } from '../qgis/project.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type LayerLifecycle, layerNotFound, type LayerService } from './layers.js';
import { type PreparedSource } from './providers/provider.js';
import { type ProjectRepository } from './repository.js';

/** The route that repairs a layer, as the project check points at it. */
export function repairHint(ref: ProjectRef, layer: string): string {
  const schema = ref.schema === 'public' ? '' : `?schema=${encodeURIComponent(ref.schema)}`;
  const path = `/api/projects/${encodeURIComponent(ref.name)}/layers/${encodeURIComponent(layer)}${schema}`;
  return `repair it with PATCH ${path} {"datasource": "<its new source>"}`;
}

/** How a filter is written into each provider's datasource that has one. */
const FILTER_SYNTAX: Record<string, (datasource: string, filter: string) => string> = {
  ogr: (datasource, filter) => `${datasource}|subset=${filter}`,
  postgres: (datasource, filter) => `${datasource} sql=${filter}`,
};

/**
 * The filter the old source had, carried to the new one when it gives none (QGIS keeps the
 * subset string), for a new source of a provider that has filters.
 */
function withFilter(entry: LayerEntry, prepared: PreparedSource, datasource: string): string {
  const filter = datasourceFilter(entry.datasource, entry.provider);
  const write = FILTER_SYNTAX[prepared.provider];
  if (filter === '' || !write || datasourceFilter(datasource, prepared.provider) !== '') return datasource;
  return write(datasource, filter);
}

/**
 * A layer's datasource changed in place, as QGIS Desktop's "Change Data Source" does: its styles,
 * labels and every other property kept. The new source must open as the layer's kind, with the same
 * geometry class, and hold the fields its styles, labels and filter read (unless forced).
 */
export class DatasourceRepair {
  constructor(
    private readonly repository: ProjectRepository,
    private readonly layers: LayerService,
    private readonly crs: CrsResolver,
    private readonly lifecycle: LayerLifecycle = {},
  ) {}

  private layerCrs(entry: LayerEntry, prepared: PreparedSource): CrsDefinition {
    const crs = this.crs.fromAuthid(entry.authid) ?? prepared.probed.crs;
    if (!crs) throw new Unprocessable(`layer "${entry.name}" has no CRS QGIS knows, nor has its new source`);
    return crs;
  }

  private checkGeometry(entry: LayerEntry, prepared: PreparedSource, datasource: string): void {
    const probed = prepared.probed;
    if (probed.type !== 'vector' || !entry.geometry || probed.geometry === entry.geometry) return;
    throw new Unprocessable(
      `layer "${entry.name}" has ${entry.geometry} geometries and ${datasource} has ${probed.geometry} geometries: its styles would not draw them`,
    );
  }

  private async checkFields(ref: ProjectRef, entry: LayerEntry, source: NewDatasource): Promise<void> {
    if (entry.type !== 'vector') return;
    const joined = new Set((await this.layers.joinedFields(ref, entry.name)).map((field) => field.name));
    const used = ((await this.repository.read(ref)).layerFieldsUsed(entry.name) ?? []).filter(
      (field) => !joined.has(field),
    );
    if (used.length === 0) return;
    let fields: string[] | undefined;
    try {
      fields = await this.layers.fieldNames(ref, { ...entry, ...source });
    } catch (error) {
      throw new Unprocessable(`the fields of ${source.datasource} cannot be read: ${(error as Error).message}`);
    }
    if (!fields) return;
    const missing = used.filter((field) => !fields.includes(field));
    if (missing.length > 0)
      throw new Unprocessable(
        `${source.datasource} has no field ${missing.map((field) => `"${field}"`).join(', ')}, which layer "${entry.name}" uses in its styles, labels or filter; change it with ?force=true all the same`,
        { code: 'fields_missing' },
      );
  }

  /** Gives `layer` the source `datasource`; `force` skips the check of its fields. */
  async repair(ref: ProjectRef, layer: string, datasource: string, force: boolean): Promise<void> {
    const entry = await this.layers.entry(ref, layer);
    const prepared = await this.layers.prepareDatasource(ref, { type: entry.type, datasource });
    this.checkGeometry(entry, prepared, datasource);
    const probed = prepared.probed;
    const crs = this.layerCrs(entry, prepared);
    const source: NewDatasource = {
      datasource: withFilter(entry, prepared, prepared.datasource(crs)),
      provider: prepared.provider,
      extent: probed.extent,
      wgs84Extent: wgs84Extent(probed.extent, probed.crs ?? crs),
      ...(probed.type === 'vector' && { wkbType: probed.wkbType }),
      ...(probed.crs && probed.crs.authid !== entry.authid && { crs: probed.crs }),
    };
    if (!force) await this.checkFields(ref, entry, source);
    await this.repository.update(
      ref,
      (document) => {
        if (!document.changeLayerDatasource(layer, source)) throw layerNotFound(ref, layer);
      },
      [],
      `changed the datasource of layer ${layer}`,
    );
    await this.lifecycle.layerStyleChanged?.(ref, layer);
  }
}
