import { dirname, isAbsolute } from 'node:path';

import { BadRequest, Conflict, NotFound, Unprocessable } from '../errors.js';
import { type CrsResolver } from '../gdal/crs.js';
import { type GdalSource } from '../gdal/datasource.js';
import { isObjectStoragePath } from '../gdal/object-storage.js';
import { buildOverviews } from '../gdal/overviews.js';
import { type Probed, vectorFields, wgs84Bounds, wgs84Extent } from '../gdal/probe.js';
import { type CrsDefinition, normaliseAuthid } from '../qgis/crs.js';
import { maskPasswords } from '../qgis/datasource-uri.js';
import { defaultRasterStyle, defaultVectorStyle } from '../qgis/default-style.js';
import { type LayerField } from '../qgis/field-types.js';
import { type Extent, formatNumber, type LayerType, type MapLayerDefinition, newLayerId } from '../qgis/layer.js';
import { fieldsOf, joinedFieldNames, layerJoins } from '../qgis/layer-references.js';
import { type LayerEntry, type ProjectDocument, type PublishedLayer } from '../qgis/project.js';
import { putLayerStyle } from '../qgis/style/layer-styles.js';
import { styleElements } from '../qgis/style/qml.js';
import { styleReferences } from '../qgis/style-references.js';
import { type SymbologyCatalogue } from '../qgis/symbology/catalogue.js';
import { instantDimension, utcInstant } from '../qgis/temporal.js';
import { type XmlElement } from '../qgis/xml/node.js';
import { type ProjectRef } from '../storage/project-store.js';
import { checkName } from './names.js';
import { type ProjectStyles } from './project-styles.js';
import { type PreparedSource, type SourceContext, type SourceState } from './providers/provider.js';
import { type ProviderRegistry } from './providers/registry.js';
import { type ProjectRepository } from './repository.js';
import { type StyleFiles } from './style-files.js';

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

/** A datasource a layer is to have, checked for a project (a new layer, a repaired one). */
export interface DatasourceRequest {
  type: LayerType;
  datasource: string;
}

export interface LayerInfo {
  name: string;
  type: LayerType;
  source: string;
  crs: string;
  /** Null for a layer without geometry, which has no extent. */
  bbox: string | null;
  /** `bbox` in degrees (EPSG:4326, longitude first); null also when its CRS cannot be transformed. */
  bbox_wgs84: string | null;
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
  /** The layer is drawn otherwise (its opacity, blending, scales or CRS changed). */
  layerStyleChanged?(ref: ProjectRef, layerName: string): Promise<void>;
}

/** `xmin ymin, xmax ymax` */
function formatBbox(extent: Extent): string {
  const [xmin, ymin, xmax, ymax] = extent.map(formatNumber);
  return `${xmin} ${ymin}, ${xmax} ${ymax}`;
}

/** Extents in degrees by CRS and extent, each transformed once: a project's layers are listed often. */
const inDegrees = new Map<string, string | null>();
const IN_DEGREES_KEPT = 10_000;

/** `extent` (in `authid`) as `west south, east north` in degrees; null when GDAL cannot transform it. */
function bboxInDegrees(extent: Extent, authid: string): string | null {
  const key = `${authid} ${extent.join(' ')}`;
  let bbox = inDegrees.get(key);
  if (bbox === undefined) {
    bbox = null;
    try {
      const degrees = wgs84Bounds(extent, { authid });
      if (degrees?.every(Number.isFinite)) bbox = formatBbox(degrees);
    } catch {
      // A CRS GDAL does not know (a custom one): the layer's own bbox stays.
    }
    if (inDegrees.size >= IN_DEGREES_KEPT) inDegrees.clear();
    inDegrees.set(key, bbox);
  }
  return bbox;
}

/** A vector layer of a table: QGIS writes no extent for it, and it has none. */
function hasNoGeometry(layer: LayerEntry): boolean {
  return layer.type === 'vector' && (layer.wkbType === 'NoGeometry' || layer.geometry === 'No geometry');
}

export function layerNotFound(ref: ProjectRef, name: string): NotFound {
  return new NotFound(`project "${ref.name}" has no layer "${name}"`, { code: 'layer_not_found' });
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
    private readonly providers: ProviderRegistry,
    /** Where the images and SVG files of the styles of a layer drawn may be read from. */
    private readonly styleFiles: StyleFiles,
    private readonly styles: ProjectStyles,
    /** The symbology catalogue of the administered QGIS, which the default style is written for. */
    private readonly catalogue: () => SymbologyCatalogue,
    private readonly lifecycle: LayerLifecycle = {},
  ) {}

  async list(ref: ProjectRef): Promise<string[]> {
    return (await this.repository.read(ref)).layers().map((layer) => layer.name);
  }

  /**
   * A layer with the datasource GDAL opens, as processing needs it: BadRequest for a layer GDAL
   * does not read (a web service, features in the project), Forbidden for one reading outside the data folders.
   */
  async source(ref: ProjectRef, name: string): Promise<LayerSource> {
    const layer = await this.entry(ref, name);
    const source = await this.gdalSource(ref, layer);
    if (!source) throw new BadRequest(`layer "${name}" (provider ${layer.provider}) is not data GDAL reads`);
    await this.confineSource(ref, layer);
    return { name: layer.name, type: layer.type, source: source.gdalPath };
  }

  /** The layers GDAL reads, with their datasources (others are left out). */
  async sources(ref: ProjectRef): Promise<LayerSource[]> {
    const layers = (await this.repository.read(ref)).layers();
    const sources = await Promise.all(
      layers.map(async (layer) => {
        const source = await this.gdalSource(ref, layer);
        return source && { name: layer.name, type: layer.type, source: source.gdalPath };
      }),
    );
    return sources.filter((source) => source !== undefined);
  }

  /** The datasources of every layer of every project in `schema` (one removed meanwhile has none). */
  async sourcesInSchema(schema: string): Promise<string[]> {
    const names = await this.repository.store.list(schema);
    const projects = await Promise.all(
      names.map((name) =>
        this.sources({ name, schema }).catch((error: unknown): LayerSource[] => {
          if (error instanceof NotFound) return [];
          throw error;
        }),
      ),
    );
    return projects.flat().map((layer) => layer.source);
  }

  /** The layer as the project records it; throws NotFound for an unknown project or layer. */
  async entry(ref: ProjectRef, name: string): Promise<LayerEntry> {
    return layerOf(await this.repository.read(ref), ref, name);
  }

  /** The layer's `<maplayer>` element as the project holds it (its current style included). */
  async mapLayer(ref: ProjectRef, name: string): Promise<XmlElement> {
    const element = (await this.repository.read(ref)).mapLayerElement(name);
    if (!element) throw layerNotFound(ref, name);
    return element;
  }

  /** The layer with the name QGIS Server publishes it under, for requests Steward sends it by layer. */
  async published(ref: ProjectRef, name: string): Promise<PublishedLayer> {
    const document = await this.repository.read(ref);
    const layer = layerOf(document, ref, name);
    await this.confineDrawn(ref, document, layer);
    return this.withExtent(ref, document.published(layer));
  }

  /**
   * QGIS 3.40 and later save a layer's extent only once something has computed it (QGIS Desktop does
   * as it draws, a script may not): a layer saved without one is given its datasource's.
   */
  private async withExtent<Layer extends LayerEntry>(ref: ProjectRef, layer: Layer): Promise<Layer> {
    if (layer.extent.every(Number.isFinite) || hasNoGeometry(layer)) return layer;
    const { probed } = await this.inspect(ref, layer);
    return probed ? { ...layer, extent: probed.extent } : layer;
  }

  /** What a layer's provider is given besides its datasource. */
  private async context(ref: ProjectRef, layer: LayerEntry): Promise<SourceContext> {
    return { type: layer.type, projectDir: await this.projectDir(ref) };
  }

  /** The project file's folder, which relative paths resolve against; undefined for a project in a database. */
  private async projectDir(ref: ProjectRef): Promise<string | undefined> {
    const projectFile = await this.repository.store.mapParameter(ref);
    return isAbsolute(projectFile) ? dirname(projectFile) : undefined;
  }

  /** The source GDAL opens for a layer, relative paths (QGIS writes them) resolved; undefined when GDAL does not read it. */
  async gdalSource(ref: ProjectRef, layer: LayerEntry): Promise<GdalSource | undefined> {
    return (await this.gdalSources(ref, [layer]))[0];
  }

  /** The field names QGIS reads of a vector layer's source; undefined for a source GDAL does not read. */
  async fieldNames(ref: ProjectRef, layer: LayerEntry): Promise<string[] | undefined> {
    const source = await this.gdalSource(ref, layer);
    return source && (await vectorFields(source)).map((field) => field.name);
  }

  /**
   * The fields the layer's joins add to it (QgsVectorLayerJoinBuffer), typed as GDAL reads the
   * joined layers' sources; a joined layer GDAL does not read gives the fields its
   * `<fieldConfiguration>` lists, of type `other`. A join to a layer the project lacks adds none,
   * as QGIS drops it.
   */
  async joinedFields(ref: ProjectRef, name: string): Promise<LayerField[]> {
    const document = await this.repository.read(ref);
    const joins = layerJoins(await this.mapLayer(ref, name));
    const added: LayerField[] = [];
    for (const join of joins) {
      const joined = document.layers().find((entry) => entry.id === join.attributes.get('joinLayerId'));
      if (!joined) continue;
      const fields = await this.readableFields(ref, joined, document);
      const byName = new Map(fields.map((field) => [field.name, field]));
      const names = joinedFieldNames(join, { name: joined.name, fields: fields.map((each) => each.name) });
      for (const { field, name: onLayer } of names)
        added.push({ ...(byName.get(field) ?? { type: 'other', type_name: '' }), name: onLayer });
    }
    return added;
  }

  /** A layer's source fields as GDAL reads them; else as its `<fieldConfiguration>` lists them, of type `other`. */
  private async readableFields(ref: ProjectRef, layer: LayerEntry, document: ProjectDocument): Promise<LayerField[]> {
    const source = layer.type === 'vector' ? await this.gdalSource(ref, layer) : undefined;
    const read = source && (await vectorFields(source).catch(() => undefined));
    if (read) return read;
    const element = document.mapLayerElement(layer.name);
    return (element ? fieldsOf(element) : []).map((name) => ({ name, type: 'other', type_name: '' }));
  }

  /** The sources of `layers` of one project, as `gdalSource` gives each; the project's folder is looked up once. */
  async gdalSources(ref: ProjectRef, layers: readonly LayerEntry[]): Promise<Array<GdalSource | undefined>> {
    const projectDir = await this.projectDir(ref);
    return layers.map((layer) =>
      this.providers.provider(layer.provider).gdalSource(layer.datasource, { type: layer.type, projectDir }),
    );
  }

  /**
   * Whether a layer can be read, as its provider checks it, the reason with passwords masked;
   * `fresh` reads it again rather than trust a remembered reading of a remote source.
   */
  async inspect(ref: ProjectRef, layer: LayerEntry, fresh = false): Promise<SourceState> {
    const context = { ...(await this.context(ref, layer)), fresh };
    return this.providers.provider(layer.provider).inspect(layer.datasource, context);
  }

  /** The layer's datasource as answers and messages show it: passwords masked. */
  describe(layer: LayerEntry): string {
    return this.providers.provider(layer.provider).describe(layer.datasource);
  }

  /** Whether layers are confined to data folders, checked again each time one is drawn. */
  get confining(): boolean {
    return this.providers.confining;
  }

  /**
   * Forbidden when drawing layer `name` would read a file outside the data folders (its source, its
   * styles' images and SVG files) or fetch one from a host not allowed; NotFound for an unknown one.
   */
  async confineByName(ref: ProjectRef, name: string): Promise<void> {
    const document = await this.repository.read(ref);
    await this.confineDrawn(ref, document, layerOf(document, ref, name));
  }

  /** Forbidden when the layer's source reads a file outside the data folders: checked again before it is read. */
  async confineSource(ref: ProjectRef, layer: LayerEntry): Promise<void> {
    await this.providers.provider(layer.provider).confine(layer.datasource, await this.context(ref, layer));
  }

  /** `confineSource`, and the files its styles name, as QGIS Server reads them when it draws the layer. */
  private async confineDrawn(ref: ProjectRef, document: ProjectDocument, layer: LayerEntry): Promise<void> {
    const context = await this.context(ref, layer);
    await this.providers.provider(layer.provider).confine(layer.datasource, context);
    const element = document.mapLayerElement(layer.name);
    if (element) await this.styleFiles.confine(styleReferences(element), context.projectDir);
  }

  async info(ref: ProjectRef, name: string): Promise<LayerInfo> {
    return this.infoOf(ref, await this.entry(ref, name));
  }

  /** What `info` tells of every layer, in project order, from one reading of the project. */
  async infos(ref: ProjectRef): Promise<LayerInfo[]> {
    const layers = (await this.repository.read(ref)).layers();
    return Promise.all(layers.map((layer) => this.infoOf(ref, layer)));
  }

  private async infoOf(ref: ProjectRef, entry: LayerEntry): Promise<LayerInfo> {
    const layer = await this.withExtent(ref, entry);
    const inspection = await this.inspect(ref, layer);
    const info: LayerInfo = {
      name: layer.name,
      type: layer.type,
      source: this.describe(layer),
      crs: layer.authid,
      bbox: layer.extent.every(Number.isFinite) ? formatBbox(layer.extent) : null,
      bbox_wgs84: layer.extent.every(Number.isFinite) ? bboxInDegrees(layer.extent, layer.authid) : null,
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

  /**
   * Checks a datasource a layer of the project is to have, as its provider reads it: BadRequest
   * for one it cannot parse (or with a control character), Forbidden outside the data folders,
   * Unprocessable for one it cannot open or QGIS would refuse.
   */
  async prepareDatasource(ref: ProjectRef, request: DatasourceRequest): Promise<PreparedSource> {
    const maker = this.providers.maker(request.datasource, request.type);
    await this.repository.read(ref);
    return maker.prepare(request.datasource, request.type);
  }

  private layerCrs(request: NewLayerRequest, probed: Probed): CrsDefinition {
    if (request.crs !== undefined) {
      const authid = normaliseAuthid(request.crs);
      const crs = authid && this.crs.fromAuthid(authid);
      if (!crs) throw new BadRequest(`crs ${request.crs} is not a known EPSG code`);
      return crs;
    }
    if (!probed.crs)
      throw new Unprocessable(`no CRS could be detected for ${maskPasswords(request.datasource)}: give "crs"`);
    return probed.crs;
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

  /** Adds a layer; a vector layer is drawn with the project's default style for its geometry. */
  async add(ref: ProjectRef, request: NewLayerRequest): Promise<void> {
    checkName('layer', request.name);
    const temporalInstant = this.temporalInstant(request);
    const maker = this.providers.maker(request.datasource, request.type);
    await this.repository.read(ref);
    const time = temporalInstant === undefined ? undefined : instantDimension(temporalInstant);
    await this.lifecycle.checkNewLayer?.(ref, { name: request.name, type: request.type, time });
    const prepared = await maker.prepare(request.datasource, request.type);
    const probed = prepared.probed;
    const crs = this.layerCrs(request, probed);
    if (request.overview) await this.buildOverviews(request, probed);
    const definition: MapLayerDefinition = {
      id: newLayerId(request.name),
      name: request.name,
      type: request.type,
      provider: prepared.provider,
      datasource: prepared.datasource(crs),
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
    const added = await this.repository.update(
      ref,
      (document) => {
        if (document.layer(request.name))
          throw new Conflict(`project "${ref.name}" already has a layer "${request.name}"`, { code: 'name_taken' });
        document.addLayer(definition);
        const element = defaultStyle && document.mapLayerElement(request.name);
        if (defaultStyle && element) {
          putLayerStyle(element, defaultStyle.name, defaultStyle.qml, true, { keepLayerRendering: true });
          document.invalidate(request.name);
        }
        return document.layer(request.name);
      },
      [],
      `added layer ${request.name}`,
    );
    if (added) await this.lifecycle.layerAdded?.(ref, added);
  }

  async remove(ref: ProjectRef, name: string): Promise<void> {
    const removed = await this.repository.update(
      ref,
      (document) => {
        const layer = layerOf(document, ref, name);
        document.removeLayer(name);
        return layer;
      },
      [],
      `removed layer ${name}`,
    );
    await this.lifecycle.layerRemoved?.(ref, removed);
  }
}
