import { dirname, isAbsolute, resolve } from 'node:path';

import { BadRequest, Conflict, NotFound, Unprocessable } from '../errors.js';
import { type CrsResolver } from '../gdal/crs.js';
import { checkNewLayerOptions, DatasourceSyntaxError, parseDatasource } from '../gdal/datasource.js';
import { isObjectStoragePath } from '../gdal/object-storage.js';
import { buildOverviews } from '../gdal/overviews.js';
import { type Probed, ProbeError, wgs84Extent } from '../gdal/probe.js';
import { type CrsDefinition, normaliseAuthid } from '../qgis/crs.js';
import { defaultRasterStyle, defaultVectorStyle } from '../qgis/default-style.js';
import { type Extent, formatNumber, type LayerType, type MapLayerDefinition, newLayerId } from '../qgis/layer.js';
import { type LayerEntry, type ProjectDocument, type PublishedLayer } from '../qgis/project.js';
import { putLayerStyle } from '../qgis/style/layer-styles.js';
import { styleElements } from '../qgis/style/qml.js';
import { type SymbologyCatalogue } from '../qgis/symbology/catalogue.js';
import { instantDimension, utcInstant } from '../qgis/temporal.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type DataRoots } from './data-roots.js';
import { type LayerInspector } from './layer-inspector.js';
import { checkName } from './names.js';
import { type ProjectStyles } from './project-styles.js';
import { type ProjectRepository } from './repository.js';

export interface NewLayerRequest {
  type: LayerType;
  name: string;
  datasource: string;
  crs?: number | string;
  overview?: boolean;
  /** Raster only: an ISO 8601 date-time the layer is fixed at in time. */
  datetime?: string;
}

export interface LayerSource {
  name: string;
  type: LayerType;
  /** The datasource GDAL opens: relative paths resolved against the project. */
  source: string;
}

export interface LayerInfo {
  name: string;
  type: LayerType;
  source: string;
  crs: string;
  bbox: string;
  current_style: string;
  styles: string[];
  valid: boolean;
  invalid_reason?: string;
  bands?: number;
  data_type?: string;
  geometry?: string;
  /** The instant a raster layer is fixed at, UTC. */
  datetime?: string;
}

/** What a layer about to be added will be, for listeners that may refuse it. */
export type PlannedLayer = Pick<LayerEntry, 'name' | 'type' | 'time'>;

/** Listeners told when layers come and go (tile cache, overviews). */
export interface LayerLifecycle {
  /** Called before anything is written: throwing refuses the layer and leaves everything as it was. */
  checkNewLayer?(ref: ProjectRef, layer: PlannedLayer): Promise<void> | void;
  layerAdded?(ref: ProjectRef, layer: LayerEntry): Promise<void>;
  layerRemoved?(ref: ProjectRef, layer: LayerEntry): Promise<void>;
}

/** `xmin ymin, xmax ymax` */
function formatBbox(extent: Extent): string {
  const [xmin, ymin, xmax, ymax] = extent.map(formatNumber);
  return `${xmin} ${ymin}, ${xmax} ${ymax}`;
}

export function layerNotFound(ref: ProjectRef, name: string): NotFound {
  return new NotFound(`project "${ref.name}" has no layer "${name}"`);
}

function layerOf(document: ProjectDocument, ref: ProjectRef, name: string): LayerEntry {
  const layer = document.layer(name);
  if (!layer) throw layerNotFound(ref, name);
  return layer;
}

export class LayerService {
  constructor(
    private readonly repository: ProjectRepository,
    private readonly crs: CrsResolver,
    private readonly inspector: LayerInspector,
    private readonly dataRoots: DataRoots,
    private readonly styles: ProjectStyles,
    /** The symbology catalogue of the administered QGIS, which the default style is written for. */
    private readonly catalogue: () => SymbologyCatalogue,
    private readonly lifecycle: LayerLifecycle = {},
  ) {}

  async list(ref: ProjectRef): Promise<string[]> {
    return (await this.repository.read(ref)).layers().map((layer) => layer.name);
  }

  /** A layer with the datasource GDAL opens, as processing needs it. */
  async source(ref: ProjectRef, name: string): Promise<LayerSource> {
    return this.withSource(ref, await this.entry(ref, name));
  }

  async sources(ref: ProjectRef): Promise<LayerSource[]> {
    const layers = (await this.repository.read(ref)).layers();
    return Promise.all(layers.map((layer) => this.withSource(ref, layer)));
  }

  private async withSource(ref: ProjectRef, layer: LayerEntry): Promise<LayerSource> {
    return { name: layer.name, type: layer.type, source: await this.gdalSource(ref, layer) };
  }

  /** The layer as the project records it; throws NotFound for an unknown project or layer. */
  async entry(ref: ProjectRef, name: string): Promise<LayerEntry> {
    return layerOf(await this.repository.read(ref), ref, name);
  }

  /** The layer with the name QGIS Server publishes it under, for requests Steward sends it by layer. */
  async published(ref: ProjectRef, name: string): Promise<PublishedLayer> {
    const document = await this.repository.read(ref);
    return this.withExtent(ref, document.published(layerOf(document, ref, name)));
  }

  /**
   * QGIS 3.40 and later save a layer's extent only once something has computed it (QGIS Desktop does
   * as it draws, a script may not): a layer saved without one is given its datasource's.
   */
  private async withExtent<Layer extends LayerEntry>(ref: ProjectRef, layer: Layer): Promise<Layer> {
    if (layer.extent.every(Number.isFinite)) return layer;
    const { probed } = await this.inspector.inspect(await this.gdalSource(ref, layer), layer.type);
    return probed ? { ...layer, extent: probed.extent } : layer;
  }

  /** The datasource as GDAL opens it: relative paths (QGIS writes them) resolved against the project. */
  async gdalSource(ref: ProjectRef, layer: LayerEntry): Promise<string> {
    const source = layer.datasource;
    if (!/^\.\.?\//.test(source)) return source;
    const projectFile = await this.repository.store.mapParameter(ref);
    return isAbsolute(projectFile) ? resolve(dirname(projectFile), source) : source;
  }

  async info(ref: ProjectRef, name: string): Promise<LayerInfo> {
    const layer = await this.withExtent(ref, await this.entry(ref, name));
    const inspection = await this.inspector.inspect(await this.gdalSource(ref, layer), layer.type);
    const info: LayerInfo = {
      name: layer.name,
      type: layer.type,
      source: layer.datasource,
      crs: layer.authid,
      bbox: formatBbox(layer.extent),
      current_style: layer.currentStyle,
      styles: layer.styles,
      valid: inspection.valid,
    };
    if (inspection.reason !== undefined) info.invalid_reason = inspection.reason;
    const probed = inspection.probed;
    if (layer.type === 'raster') {
      info.bands = probed?.type === 'raster' ? probed.bands : 0;
      info.data_type = probed?.type === 'raster' ? probed.dataType : 'Unknown';
      if (layer.time?.default !== undefined) info.datetime = layer.time.default;
    } else {
      info.geometry = layer.wkbType ?? 'Unknown';
    }
    return info;
  }

  /** The request's `datetime` as the UTC instant QGIS stores. */
  private temporalInstant(request: NewLayerRequest): string | undefined {
    if (request.datetime === undefined) return undefined;
    if (request.type !== 'raster') throw new BadRequest('datetime applies to raster layers only');
    const instant = utcInstant(request.datetime);
    if (instant === undefined) {
      throw new BadRequest(`datetime "${request.datetime}" is not an ISO 8601 date-time such as 2024-05-01T00:00:00Z`);
    }
    return instant;
  }

  private async checkDatasource({ datasource, type }: NewLayerRequest): Promise<void> {
    let parsed;
    try {
      parsed = parseDatasource(datasource);
      checkNewLayerOptions(datasource, type);
    } catch (error) {
      if (error instanceof DatasourceSyntaxError) throw new BadRequest(error.message);
      throw error;
    }
    if (parsed.kind === 'postgres') return;
    if (!isAbsolute(parsed.gdalPath)) {
      throw new BadRequest(
        `datasource "${datasource}" must be an absolute path, /vsis3/<bucket>/<key> or a database table`,
      );
    }
    await this.dataRoots.check(parsed.gdalPath);
  }

  private async probe(request: NewLayerRequest): Promise<Probed> {
    try {
      return await this.inspector.probe(request.datasource, request.type);
    } catch (error) {
      if (error instanceof ProbeError) throw new Unprocessable(error.message);
      throw error;
    }
  }

  private layerCrs(request: NewLayerRequest, probed: Probed): CrsDefinition {
    if (request.crs !== undefined) {
      const authid = normaliseAuthid(request.crs);
      const crs = authid && this.crs.fromAuthid(authid);
      if (!crs) throw new BadRequest(`crs ${request.crs} is not a known EPSG code`);
      return crs;
    }
    if (!probed.crs) throw new Unprocessable(`no CRS could be detected for ${request.datasource}: give "crs"`);
    return probed.crs;
  }

  /** The datasource as QGIS stores it; database tables get the key column and geometry type QGIS needs. */
  private storedDatasource(request: NewLayerRequest, probed: Probed, crs: CrsDefinition): string {
    const parsed = parseDatasource(request.datasource);
    if (parsed.kind !== 'postgres' || probed.type !== 'vector' || !parsed.postgres) return request.datasource;
    const { connection, schema, table, geometryColumn } = parsed.postgres;
    const entries = connection.map(([key, value]) => `${key}='${value.replace(/'/g, "\\'")}'`);
    const quote = (identifier: string): string => `"${identifier.replace(/"/g, '""')}"`;
    return [
      ...entries,
      `key='${probed.keyColumn}'`,
      `srid=${crs.srid}`,
      `type=${probed.wkbType}`,
      `checkPrimaryKeyUnicity='1'`,
      `table=${quote(schema)}.${quote(table)} (${geometryColumn})`,
    ].join(' ');
  }

  /** `overview: true` builds the overviews of a raster on object storage, stored beside it in the bucket. */
  private async buildOverviews(request: NewLayerRequest, probed: Probed): Promise<void> {
    if (probed.type !== 'raster' || !isObjectStoragePath(request.datasource)) {
      throw new BadRequest('overview applies to raster layers on object storage (/vsis3/...)');
    }
    try {
      await buildOverviews(request.datasource);
    } catch (error) {
      throw new Unprocessable(`the overviews of ${request.datasource} could not be built: ${(error as Error).message}`);
    }
  }

  private provider(request: NewLayerRequest): string {
    if (request.type === 'raster') return 'gdal';
    return parseDatasource(request.datasource).kind === 'postgres' ? 'postgres' : 'ogr';
  }

  /** Adds a layer; a vector layer is drawn with the project's default style for its geometry. */
  async add(ref: ProjectRef, request: NewLayerRequest): Promise<void> {
    checkName('layer', request.name);
    const temporalInstant = this.temporalInstant(request);
    await this.checkDatasource(request);
    await this.repository.read(ref);
    const time = temporalInstant === undefined ? undefined : instantDimension(temporalInstant);
    await this.lifecycle.checkNewLayer?.(ref, { name: request.name, type: request.type, time });
    const probed = await this.probe(request);
    const crs = this.layerCrs(request, probed);
    if (request.overview) await this.buildOverviews(request, probed);
    const definition: MapLayerDefinition = {
      id: newLayerId(request.name),
      name: request.name,
      type: request.type,
      provider: this.provider(request),
      datasource: this.storedDatasource(request, probed, crs),
      crs,
      extent: probed.extent,
      wgs84Extent: wgs84Extent(probed.extent, crs),
      temporalInstant,
      styleElements: styleElements(
        probed.type === 'vector'
          ? defaultVectorStyle(probed.geometry)
          : defaultRasterStyle(probed.dataType, probed.bandRanges),
        { catalogue: this.catalogue() },
      ),
    };
    const defaultStyle = await this.styles.defaultStyleFor(ref, probed);
    if (probed.type === 'vector') {
      definition.wkbType = probed.wkbType;
      definition.geometry = probed.geometry;
    }
    const added = await this.repository.update(ref, (document) => {
      if (document.layer(request.name))
        throw new Conflict(`project "${ref.name}" already has a layer "${request.name}"`);
      document.addLayer(definition);
      const element = defaultStyle && document.mapLayerElement(request.name);
      if (defaultStyle && element) {
        putLayerStyle(element, defaultStyle.name, defaultStyle.qml, true);
        document.invalidate(request.name);
      }
      return document.layer(request.name);
    });
    if (added) await this.lifecycle.layerAdded?.(ref, added);
  }

  async remove(ref: ProjectRef, name: string): Promise<void> {
    const removed = await this.repository.update(ref, (document) => {
      const layer = layerOf(document, ref, name);
      document.removeLayer(name);
      return layer;
    });
    await this.lifecycle.layerRemoved?.(ref, removed);
  }
}
