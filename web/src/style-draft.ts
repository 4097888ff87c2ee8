/**
 * The style editor's draft: a JSON style (docs/styles.md, "JSON styles") held as the form's
 * strings, read from what `GET .../styles/{style}?as=json` answers and written back as the body
 * `PUT .../styles/{style}` takes. Classifying (distinct values, equal intervals) is done here too.
 */

export type VectorRenderer = 'single_symbol' | 'categorized' | 'graduated';
export type RasterRenderer = 'singlebandpseudocolor' | 'singlebandgray';
export type Renderer = VectorRenderer | RasterRenderer;
export type SymbolKind = 'marker' | 'line' | 'fill';
export type Interpolation = 'INTERPOLATED' | 'DISCRETE' | 'EXACT';

export interface Category {
  value: string;
  label: string;
  colour: string;
}
export interface Range {
  lower: string;
  upper: string;
  label: string;
  colour: string;
}
export interface Stop {
  value: string;
  label: string;
  colour: string;
}

export interface Draft {
  name: string;
  opacity: string;
  renderer: Renderer;
  /** The symbol's properties (QGIS's names), as the form's strings. */
  values: Record<string, string>;
  field: string;
  categories: Category[];
  /** The colour of the other values; undefined when they are not drawn. */
  other: { label: string; colour: string } | undefined;
  ranges: Range[];
  band: string;
  min: string;
  max: string;
  interpolation: Interpolation;
  stops: Stop[];
  stretch: boolean;
}

/** The property each class colours: `color` of a marker or fill, `line_color` of a line. */
export const CLASS_COLOUR: Record<SymbolKind, string> = { marker: 'color', line: 'line_color', fill: 'color' };

export function freshDraft(name: string, raster: boolean): Draft {
  return {
    name,
    opacity: '1',
    renderer: raster ? 'singlebandpseudocolor' : 'single_symbol',
    values: {},
    field: '',
    categories: [],
    other: undefined,
    ranges: [],
    band: '1',
    // A raster's limits start from its band's statistics (the editor reads them), not from a guess.
    min: '',
    max: '',
    interpolation: 'INTERPOLATED',
    stops: [],
    stretch: true,
  };
}

/** The smallest and largest valid value of each band, by band number. */
export type BandStatistics = Record<string, { min: number; max: number }>;

/** The draft with the band's statistics as its limits, where it has none of its own. */
export function withStatistics(draft: Draft, statistics: BandStatistics): Draft {
  const band = statistics[draft.band];
  if (!band) return draft;
  return { ...draft, min: draft.min || String(band.min), max: draft.max || String(band.max) };
}

/** A colour as the form holds it: `#rrggbb` for the picker, and its alpha (0 to 255). */
export interface ColourParts {
  hex: string;
  alpha: number;
}

const toHex = (values: number[]): string => `#${values.map((value) => value.toString(16).padStart(2, '0')).join('')}`;

/** The parts of `#RRGGBB` or `r,g,b[,a]`, the colours of the JSON styles. */
export function colourParts(colour: string): ColourParts {
  if (colour.startsWith('#')) return { hex: colour.slice(0, 7).toLowerCase(), alpha: 255 };
  const [r = 0, g = 0, b = 0, alpha = 255] = colour.split(',').map(Number);
  return { hex: toHex([r, g, b]), alpha };
}

/** The colour the API takes: `#rrggbb` when opaque, `r,g,b,a` otherwise, which keeps the alpha. */
export function colourText({ hex, alpha }: ColourParts): string {
  if (alpha >= 255) return hex;
  const channels = [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16));
  return [...channels, Math.max(0, Math.round(alpha))].join(',');
}

/** A colour read from a style, alpha kept, as the form holds it. */
const formColour = (colour: string): string => colourText(colourParts(colour));

type Json = Record<string, unknown>;
/** A JSON scalar as the form's text; objects and absent values are empty. */
const text = (value: unknown): string =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

function classesOf(draft: Draft, symbology: Json): Draft {
  const categories = list(symbology['categories']).map((entry) => ({
    value: text(entry['value']),
    label: text(entry['label']),
    colour: formColour(text(entry['colour'])),
  }));
  const ranges = list(symbology['ranges']).map((entry) => ({
    lower: text(entry['lower']),
    upper: text(entry['upper']),
    label: text(entry['label']),
    colour: formColour(text(entry['colour'])),
  }));
  const other = symbology['other'] as Json | undefined;
  return {
    ...draft,
    field: text(symbology['field']),
    categories,
    ranges,
    other: other && { label: text(other['label']), colour: formColour(text(other['colour'])) },
  };
}

function rasterOf(draft: Draft, properties: Json): Draft {
  const enhancement = (properties['contrast_enhancement'] ?? {}) as Json;
  const gray = properties['gray'] as Json | undefined;
  return {
    ...draft,
    band: text(gray ? gray['band'] : properties['band']) || '1',
    min: text(gray ? enhancement['min'] : properties['min']) || draft.min,
    max: text(gray ? enhancement['max'] : properties['max']) || draft.max,
    interpolation: (text(properties['interpolation']) || 'INTERPOLATED') as Interpolation,
    stops: list(properties['stops']).map((stop) => ({
      value: text(stop['value']),
      label: text(stop['label']),
      colour: formColour(text(stop['colour'])),
    })),
    stretch: text(enhancement['algorithm']) !== 'NoEnhancement',
  };
}

/** The draft of a JSON style the API described; undefined for a renderer the editor lacks. */
export function draftOf(style: Json, raster: boolean): Draft | undefined {
  const symbology = (style['symbology'] ?? {}) as Json;
  const renderer = text(symbology['type']);
  const known: Renderer[] = raster
    ? ['singlebandpseudocolor', 'singlebandgray']
    : ['single_symbol', 'categorized', 'graduated'];
  if (!known.includes(renderer as Renderer)) return undefined;
  const rendering = (style['rendering'] ?? {}) as Json;
  const base = { ...freshDraft(text(style['name']), raster), renderer: renderer as Renderer };
  if (raster) return rasterOf(base, (symbology['properties'] ?? {}) as Json);
  const values = Object.fromEntries(
    Object.entries((symbology['properties'] ?? {}) as Json).map(([key, value]) => [key, text(value)]),
  );
  return classesOf({ ...base, opacity: text(rendering['opacity'] ?? 1), values }, symbology);
}

function vectorSymbology(draft: Draft, symbol: SymbolKind, properties: Record<string, string | number>): Json {
  if (draft.renderer === 'single_symbol') return { type: draft.renderer, symbol, properties };
  const { [CLASS_COLOUR[symbol]]: _colour, ...shared } = properties;
  const common = { type: draft.renderer, symbol, properties: shared, field: draft.field };
  if (draft.renderer === 'graduated') {
    const ranges = draft.ranges.map((range) => ({ ...range, lower: Number(range.lower), upper: Number(range.upper) }));
    return { ...common, ranges };
  }
  return { ...common, categories: draft.categories, ...(draft.other ? { other: draft.other } : {}) };
}

function rasterSymbology(draft: Draft): Json {
  const band = Number(draft.band);
  if (draft.renderer === 'singlebandgray') {
    const algorithm = draft.stretch ? 'StretchToMinimumMaximum' : 'NoEnhancement';
    const contrast = { algorithm, limits_min_max: 'UserDefined', min: Number(draft.min), max: Number(draft.max) };
    return { type: draft.renderer, properties: { gray: { band }, contrast_enhancement: contrast } };
  }
  const stops = draft.stops.map((stop) => ({ ...stop, value: Number(stop.value) }));
  const properties = {
    band,
    min: Number(draft.min),
    max: Number(draft.max),
    interpolation: draft.interpolation,
    stops,
  };
  return { type: draft.renderer, properties };
}

/** The body of `PUT .../styles/{style}`; `properties` are the symbol's, as sent. */
export function styleBody(draft: Draft, symbol: SymbolKind | 'raster', properties: Record<string, string | number>) {
  if (symbol === 'raster') return { type: 'raster', name: draft.name, symbology: rasterSymbology(draft) };
  return {
    type: 'vector',
    name: draft.name,
    rendering: { opacity: Number(draft.opacity) },
    symbology: vectorSymbology(draft, symbol, properties),
  };
}

/** Distinct colours for categories: hues a golden angle apart. */
export function categoryColour(index: number): string {
  const hue = (index * 137.508) % 360;
  return hslHex(hue, 0.65, 0.5);
}

function hslHex(hue: number, saturation: number, lightness: number): string {
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const channel = (n: number): number => {
    const k = (n + hue / 30) % 12;
    const value = lightness - chroma * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(value * 255);
  };
  return toHex([channel(0), channel(8), channel(4)]);
}

/** A colour `share` (0 to 1) of the way from light yellow to dark red, as a graduated ramp. */
export function rampColour(share: number): string {
  const from = [255, 255, 178];
  const to = [189, 0, 38];
  const mixed = from.map((start, i) => Math.round(start + ((to[i] ?? start) - start) * share));
  return toHex(mixed);
}

/** A category per distinct value but the empty one (the other values' category), sorted, each in its own colour. */
export function classifyCategories(values: Array<string | number>): Category[] {
  const distinct = [...new Set(values.map(String).filter((value) => value !== ''))];
  distinct.sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  return distinct.map((value, index) => ({ value, label: value, colour: categoryColour(index) }));
}

/** `count` ranges of equal width from `low` to `high`, coloured along the ramp. */
export function equalIntervals(low: number, high: number, count: number): Range[] {
  const width = (high - low) / count;
  const bound = (i: number): number => (i === count ? high : Number((low + width * i).toPrecision(12)));
  return Array.from({ length: count }, (_, i) => {
    const [lower, upper] = [bound(i), bound(i + 1)];
    return {
      lower: String(lower),
      upper: String(upper),
      label: `${lower} - ${upper}`,
      colour: rampColour(i / (count - 1 || 1)),
    };
  });
}

/** `count` colour stops from `min` to `max`, coloured along the ramp. */
export function evenStops(min: number, max: number, count: number): Stop[] {
  return Array.from({ length: count }, (_, i) => {
    const value = Number((min + ((max - min) * i) / (count - 1)).toPrecision(12));
    return { value: String(value), label: String(value), colour: rampColour(i / (count - 1)) };
  });
}
