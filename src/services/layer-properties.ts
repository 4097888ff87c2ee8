import { BadRequest, Conflict } from '../errors.js';
import { type CrsResolver } from '../gdal/crs.js';
import { type CrsDefinition, normaliseAuthid } from '../qgis/crs.js';
import { type LayerProperties, type LayerPropertiesChange } from '../qgis/layer-properties.js';
import { type ProjectRef } from '../storage/project-store.js';
import { type LayerLifecycle, layerNotFound } from './layers.js';
import { checkName, checkText } from './names.js';
import { type ProjectRepository } from './repository.js';

/** A change as a request gives it: the CRS as an authority id. */
export type LayerPropertiesRequest = Omit<LayerPropertiesChange, 'crs'> & { crs?: string };

/** What changes how the layer is drawn: its cached tiles are stale after it. */
const DRAWING = ['scale_based_visibility', 'min_scale', 'max_scale', 'opacity', 'blending', 'crs'] as const;

function checkTexts(request: LayerPropertiesRequest): void {
  const texts: Array<[string, string | undefined]> = [
    ['title', request.title],
    ['abstract', request.abstract],
    ['short_name', request.short_name],
    ['attribution', request.attribution?.title],
    ['attribution url', request.attribution?.url],
    ['data_url', request.data_url?.url],
    ...(request.keywords ?? []).map((keyword): [string, string] => ['keyword', keyword]),
    ...(request.metadata_urls ?? []).map(({ url }): [string, string] => ['metadata url', url]),
  ];
  for (const [field, value] of texts) if (value !== undefined) checkText(field, value);
  if (request.keywords?.some((keyword) => keyword.includes(',')))
    throw new BadRequest('a keyword must not contain a comma (QGIS keeps keywords as one comma-separated text)');
}

/** A layer's properties (layer-properties.ts of src/qgis), read and changed as QGIS Desktop's layer properties do. */
/** The one-line summary of a change of properties, as the layer's version tells it. */
function propertiesSummary(layer: string, request: LayerPropertiesRequest): string {
  const changed = Object.entries(request)
    .filter(([field, value]) => value !== undefined && field !== 'name')
    .map(([field]) => field);
  const renamed =
    request.name !== undefined && request.name !== layer ? `renamed layer ${layer} → ${request.name}` : '';
  if (changed.length === 0) return renamed || `changed layer ${layer}`;
  const properties = `changed ${changed.join(', ')} of layer ${renamed ? (request.name as string) : layer}`;
  return renamed ? `${renamed}; ${properties}` : properties;
}

export class LayerPropertiesService {
  constructor(
    private readonly repository: ProjectRepository,
    private readonly crs: CrsResolver,
    private readonly lifecycle: LayerLifecycle = {},
  ) {}

  private definition(crs: string): CrsDefinition {
    const authid = normaliseAuthid(crs);
    const definition = authid === undefined ? undefined : this.crs.fromAuthid(authid);
    if (!definition) throw new BadRequest(`crs "${crs}" is not a known EPSG code`);
    return definition;
  }

  async properties(ref: ProjectRef, layer: string): Promise<LayerProperties> {
    const properties = (await this.repository.read(ref)).layerProperties(layer);
    if (!properties) throw layerNotFound(ref, layer);
    return properties;
  }

  async change(ref: ProjectRef, layer: string, request: LayerPropertiesRequest): Promise<LayerProperties> {
    if (request.name !== undefined) checkName('layer', request.name);
    checkTexts(request);
    const { crs, ...fields } = request;
    const change: LayerPropertiesChange = crs === undefined ? fields : { ...fields, crs: this.definition(crs) };
    const renamed = request.name !== undefined && request.name !== layer;
    const before = await this.repository.update(
      ref,
      (document) => {
        const entry = document.layer(layer);
        if (!entry) throw layerNotFound(ref, layer);
        if (renamed && document.layer(request.name as string))
          throw new Conflict(`project "${ref.name}" already has a layer "${request.name}"`, { code: 'name_taken' });
        document.changeLayerProperties(layer, change);
        return entry;
      },
      [],
      propertiesSummary(layer, request),
    );
    const name = request.name ?? layer;
    if (renamed || request.short_name !== undefined) {
      // The layer's WMS name may have changed: the tile cache's configuration names it.
      await this.lifecycle.layerRemoved?.(ref, before);
      const after = (await this.repository.read(ref)).layer(name);
      if (after) await this.lifecycle.layerAdded?.(ref, after);
    } else if (DRAWING.some((field) => request[field] !== undefined)) {
      await this.lifecycle.layerStyleChanged?.(ref, name);
    }
    return this.properties(ref, name);
  }
}
