/**
 * A layer's own properties as QGIS writes them in its `<maplayer>`: what QGIS Server publishes of it
 * (title, abstract, keywords, short name, attribution, data and metadata URLs), when it is drawn
 * (scale-based visibility), how (opacity, blending) and in which CRS.
 */
import { type CrsDefinition, spatialRefSysElement } from './crs.js';
import { formatNumber } from './layer.js';
import {
  childElements,
  childText,
  element,
  firstChild,
  indent,
  removeChild,
  replaceChild,
  text,
  textElement,
  type XmlElement,
} from './xml/node.js';

export interface MetadataUrl {
  url: string;
  type: string;
  format: string;
}

/** What `GET .../properties` answers and `PATCH` sets (any of them). */
export interface LayerProperties {
  name: string;
  title: string;
  abstract: string;
  keywords: string[];
  /** The name QGIS Server publishes the layer under instead of its name; empty for none. */
  short_name: string;
  attribution: { title: string; url: string };
  data_url: { url: string; format: string };
  metadata_urls: MetadataUrl[];
  /** Drawn only between the scales: `min_scale` the most zoomed out (largest denominator), `max_scale` the most zoomed in. */
  scale_based_visibility: boolean;
  min_scale: number;
  max_scale: number;
  /** 0 (transparent) to 1. */
  opacity: number;
  blending: BlendMode;
  crs: string;
}

/** QGIS's blend modes (QgsPainting::BlendMode), in the order of the numbers it writes. */
export const BLEND_MODES = [
  'normal',
  'lighten',
  'screen',
  'dodge',
  'addition',
  'darken',
  'multiply',
  'burn',
  'overlay',
  'soft_light',
  'hard_light',
  'difference',
  'subtract',
] as const;

export type BlendMode = (typeof BLEND_MODES)[number];

export type LayerPropertiesChange = Partial<Omit<LayerProperties, 'crs'>> & { crs?: CrsDefinition };

/** The raster renderer, whose `opacity` attribute is a raster layer's opacity. */
function rasterRenderer(layer: XmlElement): XmlElement | undefined {
  const pipe = firstChild(layer, 'pipe');
  return pipe && firstChild(pipe, 'rasterrenderer');
}

function readOpacity(layer: XmlElement): number {
  const value =
    layer.attributes.get('type') === 'raster'
      ? rasterRenderer(layer)?.attributes.get('opacity')
      : childText(layer, 'layerOpacity');
  return value === undefined || value === '' ? 1 : Number(value);
}

export function readLayerProperties(layer: XmlElement): LayerProperties {
  const attribution = firstChild(layer, 'attribution');
  const dataUrl = firstChild(layer, 'dataUrl');
  const metadataUrls = firstChild(layer, 'metadataUrls');
  const keywords = firstChild(layer, 'keywordList');
  return {
    name: childText(layer, 'layername'),
    title: childText(layer, 'title'),
    abstract: childText(layer, 'abstract'),
    keywords: keywords
      ? childElements(keywords, 'value')
          .map((value) => childText(value))
          .filter(Boolean)
      : [],
    short_name: childText(layer, 'shortname'),
    attribution: { title: attribution ? childText(attribution) : '', url: attribution?.attributes.get('href') ?? '' },
    data_url: { url: dataUrl ? childText(dataUrl) : '', format: dataUrl?.attributes.get('format') ?? '' },
    metadata_urls: metadataUrls
      ? childElements(metadataUrls, 'metadataUrl').map((url) => ({
          url: childText(url),
          type: url.attributes.get('type') ?? '',
          format: url.attributes.get('format') ?? '',
        }))
      : [],
    scale_based_visibility: layer.attributes.get('hasScaleBasedVisibilityFlag') === '1',
    min_scale: Number(layer.attributes.get('minScale') ?? 0),
    max_scale: Number(layer.attributes.get('maxScale') ?? 0),
    opacity: readOpacity(layer),
    blending: BLEND_MODES[Number(childText(layer, 'blendMode') || 0)] ?? 'normal',
    crs: childText(layer, 'srs', 'spatialrefsys', 'authid'),
  };
}

/** The indentation of the layer's children: a `<maplayer>` stands two levels deep. */
const CHILD_DEPTH = 3;

/**
 * Puts `replacement` in the place of the layer's `<name>`, or, when it has none, where QGIS writes
 * it: before the first of `before` the layer has (else at its end). Undefined removes it.
 */
function putChild(
  layer: XmlElement,
  name: string,
  replacement: XmlElement | undefined,
  before: readonly string[],
): void {
  const existing = firstChild(layer, name);
  if (existing && replacement) return replaceChild(layer, existing, indent(replacement, CHILD_DEPTH));
  if (existing) return removeChild(layer, existing);
  if (!replacement) return;
  const anchor = before.map((next) => firstChild(layer, next)).find((found) => found !== undefined);
  const index = anchor ? layer.children.indexOf(anchor) : layer.children.length - 1;
  layer.children.splice(index, 0, indent(replacement, CHILD_DEPTH), text('\n' + '  '.repeat(CHILD_DEPTH)));
}

/** QGIS writes these between `<datasource>` and `<layername>`, in this order, each only when set. */
const SERVER_ELEMENTS = ['shortname', 'title', 'abstract', 'keywordList', 'dataUrl', 'attribution', 'layername'];

function after(name: string): string[] {
  return SERVER_ELEMENTS.slice(SERVER_ELEMENTS.indexOf(name) + 1);
}

function putText(layer: XmlElement, name: string, value: string): void {
  putChild(layer, name, value === '' ? undefined : textElement(name, value), after(name));
}

function setOpacity(layer: XmlElement, opacity: number): void {
  const value = formatNumber(opacity);
  if (layer.attributes.get('type') === 'raster') {
    rasterRenderer(layer)?.attributes.set('opacity', value);
    return;
  }
  const existing = firstChild(layer, 'layerOpacity');
  if (existing) existing.children = [text(value)];
  else putChild(layer, 'layerOpacity', textElement('layerOpacity', value), ['geometryOptions']);
}

function setBlending(layer: XmlElement, blending: BlendMode): void {
  const value = String(BLEND_MODES.indexOf(blending));
  const existing = firstChild(layer, 'blendMode');
  if (existing) existing.children = [text(value)];
  else putChild(layer, 'blendMode', textElement('blendMode', value), ['featureBlendMode', 'layerOpacity']);
}

/** Each field of `change` written as QGIS writes it; the others stay as they are. */
export function writeLayerProperties(layer: XmlElement, change: LayerPropertiesChange): void {
  if (change.name !== undefined) putChild(layer, 'layername', textElement('layername', change.name), []);
  if (change.short_name !== undefined) putText(layer, 'shortname', change.short_name);
  if (change.title !== undefined) putText(layer, 'title', change.title);
  if (change.abstract !== undefined) putText(layer, 'abstract', change.abstract);
  if (change.keywords !== undefined) {
    const values = change.keywords.length > 0 ? change.keywords : [''];
    const list = element(
      'keywordList',
      {},
      values.map((value) => textElement('value', value)),
    );
    putChild(layer, 'keywordList', list, after('keywordList'));
  }
  if (change.data_url !== undefined) {
    const { url, format } = change.data_url;
    putChild(layer, 'dataUrl', url === '' ? undefined : textElement('dataUrl', url, { format }), after('dataUrl'));
  }
  if (change.attribution !== undefined) {
    const { title, url } = change.attribution;
    const written = title === '' ? undefined : textElement('attribution', title, { href: url });
    putChild(layer, 'attribution', written, after('attribution'));
  }
  if (change.metadata_urls !== undefined) {
    const urls = change.metadata_urls.map(({ url, type, format }) => textElement('metadataUrl', url, { type, format }));
    putChild(layer, 'metadataUrls', element('metadataUrls', {}, urls), ['flags', 'temporal']);
  }
  if (change.scale_based_visibility !== undefined)
    layer.attributes.set('hasScaleBasedVisibilityFlag', change.scale_based_visibility ? '1' : '0');
  if (change.min_scale !== undefined) layer.attributes.set('minScale', formatNumber(change.min_scale));
  if (change.max_scale !== undefined) layer.attributes.set('maxScale', formatNumber(change.max_scale));
  if (change.opacity !== undefined) setOpacity(layer, change.opacity);
  if (change.blending !== undefined) setBlending(layer, change.blending);
  if (change.crs !== undefined) {
    putChild(layer, 'srs', element('srs', {}, [spatialRefSysElement(change.crs)]), ['resourceMetadata', 'provider']);
  }
}
