/** Raster styles as the `pipe` elements QGIS 3.22 writes in a QML. */
import { Unprocessable } from '../../errors.js';
import { formatNumber } from '../layer.js';
import type { SymbologyCatalogue } from '../symbology/catalogue.js';
import { childElements, childText, element, firstChild, path, textElement, type XmlElement } from '../xml/node.js';
import { qgisColour, styleColour } from './colour.js';
import type {
  Algorithm,
  ColourBand,
  ColourStop,
  Interpolation,
  Limits,
  MultiBandColorStyle,
  PseudoColorStyle,
  RasterRendering,
  RasterStyle,
  SingleBandGrayStyle,
} from './schema.js';
import { emptyDataDefined } from './xml.js';

/** Root attributes of a raster QML for the Rendering category, at QGIS's defaults. */
export const RASTER_RENDERING_ATTRIBUTES = { hasScaleBasedVisibilityFlag: '0', maxScale: '0', minScale: '1e+08' };

export interface BandStatistics {
  readonly min: number;
  readonly max: number;
}

/** What only the layer knows when a raster style is applied to it. */
export interface RasterLayerFacts {
  /** Minimum and maximum of each band (1-based), for MinMax limits; also bounds the band numbers. */
  readonly bandStatistics?: ReadonlyMap<number, BandStatistics>;
}

interface Enhancement {
  algorithm: Algorithm;
  limits: Limits;
}

/** QGIS calls user-given limits "None". */
const QGIS_LIMITS: Record<Limits, string> = { MinMax: 'MinMax', UserDefined: 'None' };

function minMaxOrigin(limits: Limits): XmlElement {
  return element('minMaxOrigin', {}, [
    textElement('limits', QGIS_LIMITS[limits]),
    textElement('extent', 'WholeRaster'),
    textElement('statAccuracy', 'Estimated'),
    textElement('cumulativeCutLower', '0.02'),
    textElement('cumulativeCutUpper', '0.98'),
    textElement('stdDevFactor', '2'),
  ]);
}

function bandRange(band: number, given: { min?: number; max?: number }, facts: RasterLayerFacts, limits: Limits) {
  const statistics = facts.bandStatistics;
  if (statistics && !statistics.has(band)) {
    throw new Unprocessable(`the style uses band ${band}, which the layer does not have (it has ${statistics.size})`);
  }
  if (limits === 'UserDefined') return given;
  return statistics?.get(band) ?? {};
}

/** `<name>` with min/max (left out when unknown, as for MinMax limits before a layer is known). */
function enhancementElement(name: string, range: { min?: number; max?: number }, algorithm: Algorithm): XmlElement {
  const children: XmlElement[] = [];
  if (range.min !== undefined) children.push(textElement('minValue', formatNumber(range.min)));
  if (range.max !== undefined) children.push(textElement('maxValue', formatNumber(range.max)));
  children.push(textElement('algorithm', algorithm));
  return element(name, {}, children);
}

function rampLegendSettings(): XmlElement {
  const option = (type: string, name: string, value: string) => element('Option', { name, type, value });
  return element(
    'rampLegendSettings',
    {
      minimumLabel: '',
      maximumLabel: '',
      prefix: '',
      suffix: '',
      direction: '0',
      useContinuousLegend: '1',
      orientation: '2',
    },
    [
      element('numericFormat', { id: 'basic' }, [
        element('Option', { type: 'Map' }, [
          option('QChar', 'decimal_separator', ''),
          option('int', 'decimals', '6'),
          option('int', 'rounding_type', '0'),
          option('bool', 'show_plus', 'false'),
          option('bool', 'show_thousand_separator', 'true'),
          option('bool', 'show_trailing_zeros', 'false'),
          option('QChar', 'thousand_separator', ''),
        ]),
      ]),
    ],
  );
}

function enhancementOf(style: SingleBandGrayStyle | MultiBandColorStyle, catalogue: SymbologyCatalogue): Enhancement {
  const given = style.symbology.properties.contrast_enhancement;
  const defaults = catalogue.rasterRenderer(style.symbology.type).contrast_enhancement;
  return {
    algorithm: given?.algorithm ?? (defaults.algorithm as Algorithm),
    limits: given?.limits_min_max ?? (defaults.limits_min_max as Limits),
  };
}

const RENDERER_ATTRIBUTES = { alphaBand: '-1', nodataColor: '', opacity: '1' };

function grayRenderer(style: SingleBandGrayStyle, enhancement: Enhancement, facts: RasterLayerFacts): XmlElement {
  const { gray, contrast_enhancement: given = {} } = style.symbology.properties;
  const range = bandRange(gray.band, given, facts, enhancement.limits);
  return element(
    'rasterrenderer',
    { type: 'singlebandgray', grayBand: String(gray.band), gradient: 'BlackToWhite', ...RENDERER_ATTRIBUTES },
    [
      minMaxOrigin(enhancement.limits),
      enhancementElement('contrastEnhancement', range, enhancement.algorithm),
      rampLegendSettings(),
    ],
  );
}

/** QGIS's colour ramp item colour: `#rrggbb` and the alpha apart. */
function rampItemColour(colour: string, key: string): { color: string; alpha: string } {
  const [r, g, b, a] = qgisColour(colour, key).split(',').map(Number) as [number, number, number, number];
  const hex = [r, g, b].map((n) => n.toString(16).padStart(2, '0')).join('');
  return { color: `#${hex}`, alpha: String(a) };
}

function pseudoColorRenderer(style: PseudoColorStyle, facts: RasterLayerFacts): XmlElement {
  const { band, min, max, interpolation = 'INTERPOLATED', stops } = style.symbology.properties;
  bandRange(band, { min, max }, facts, 'UserDefined');
  const items = stops.map((stop, index) =>
    element('item', {
      label: stop.label ?? formatNumber(stop.value),
      value: formatNumber(stop.value),
      ...rampItemColour(stop.colour, `symbology.properties.stops.${index}.colour`),
    }),
  );
  const shader = element(
    'colorrampshader',
    {
      colorRampType: interpolation,
      classificationMode: '1',
      clip: '0',
      minimumValue: formatNumber(min),
      maximumValue: formatNumber(max),
      labelPrecision: '6',
    },
    [...items, rampLegendSettings()],
  );
  const attributes = {
    type: 'singlebandpseudocolor',
    band: String(band),
    classificationMin: formatNumber(min),
    classificationMax: formatNumber(max),
  };
  return element('rasterrenderer', { ...attributes, ...RENDERER_ATTRIBUTES }, [
    minMaxOrigin('UserDefined'),
    element('rastershader', {}, [shader]),
  ]);
}

const COLOURS = ['red', 'green', 'blue'] as const;

/** The bands a raster style reads. */
export function styleBands(style: RasterStyle): number[] {
  const symbology = style.symbology;
  if (symbology.type === 'singlebandpseudocolor') return [symbology.properties.band];
  if (symbology.type === 'singlebandgray') return [symbology.properties.gray.band];
  return COLOURS.map((colour) => symbology.properties[colour].band);
}

function colourRenderer(style: MultiBandColorStyle, enhancement: Enhancement, facts: RasterLayerFacts): XmlElement {
  const bands = style.symbology.properties;
  const attributes: Record<string, string> = { type: 'multibandcolor' };
  for (const colour of COLOURS) attributes[`${colour}Band`] = String(bands[colour].band);
  const enhancements = COLOURS.map((colour) => {
    const range = bandRange(bands[colour].band, bands[colour], facts, enhancement.limits);
    return enhancementElement(`${colour}ContrastEnhancement`, range, enhancement.algorithm);
  });
  return element('rasterrenderer', { ...attributes, ...RENDERER_ATTRIBUTES }, [
    minMaxOrigin(enhancement.limits),
    ...enhancements,
  ]);
}

function rendererElement(style: RasterStyle, catalogue: SymbologyCatalogue, facts: RasterLayerFacts): XmlElement {
  if (style.symbology.type === 'singlebandpseudocolor') return pseudoColorRenderer(style as PseudoColorStyle, facts);
  const enhancement = enhancementOf(style as SingleBandGrayStyle | MultiBandColorStyle, catalogue);
  return style.symbology.type === 'singlebandgray'
    ? grayRenderer(style as SingleBandGrayStyle, enhancement, facts)
    : colourRenderer(style as MultiBandColorStyle, enhancement, facts);
}

/** The pipe's brightness, contrast, gamma and saturation filters. */
export function rasterFilters(rendering: Required<RasterRendering>): XmlElement[] {
  return [
    element('brightnesscontrast', {
      brightness: formatNumber(rendering.brightness),
      contrast: formatNumber(rendering.contrast),
      gamma: formatNumber(rendering.gamma),
    }),
    element('huesaturation', {
      saturation: formatNumber(rendering.saturation),
      grayscaleMode: '0',
      invertColors: '0',
      colorizeOn: '0',
      colorizeRed: '255',
      colorizeGreen: '128',
      colorizeBlue: '128',
      colorizeStrength: '100',
    }),
  ];
}

/** The elements a raster style puts in a `<maplayer>` (and a QML): `pipe-data-defined-properties`, `pipe`, `blendMode`. */
export function rasterStyleElements(
  style: RasterStyle,
  catalogue: SymbologyCatalogue,
  facts: RasterLayerFacts,
): XmlElement[] {
  const renderer = rendererElement(style, catalogue, facts);
  const resampling = {
    enabled: 'false',
    maxOversampling: '2',
    zoomedInResamplingMethod: 'nearestNeighbour',
    zoomedOutResamplingMethod: 'nearestNeighbour',
  };
  const pipe = element('pipe', {}, [
    element('provider', {}, [element('resampling', resampling)]),
    renderer,
    ...rasterFilters({ ...catalogue.rasterRendering, ...style.rendering }),
    element('rasterresampler', { maxOversampling: '2' }),
    textElement('resamplingStage', 'resamplingFilter'),
  ]);
  return [emptyDataDefined('pipe-data-defined-properties'), pipe, textElement('blendMode', '0')];
}

const ALGORITHMS: readonly string[] = ['StretchToMinimumMaximum', 'NoEnhancement'];

function limitsOf(renderer: XmlElement): Limits {
  const limits = childText(renderer, 'minMaxOrigin', 'limits');
  if (limits === 'MinMax') return 'MinMax';
  if (limits === 'None') return 'UserDefined';
  throw new Unprocessable(`the style's contrast enhancement limits "${limits}" are not MinMax or user-defined`);
}

function readEnhancement(renderer: XmlElement, name: string, limits: Limits) {
  const enhancement = firstChild(renderer, name);
  const algorithm = enhancement ? childText(enhancement, 'algorithm') : '';
  if (!ALGORITHMS.includes(algorithm)) {
    throw new Unprocessable(`the style's contrast enhancement "${algorithm}" is not one of ${ALGORITHMS.join(', ')}`);
  }
  if (limits === 'MinMax') return { algorithm: algorithm as Algorithm, range: {} };
  const min = Number(childText(enhancement as XmlElement, 'minValue') || NaN);
  const max = Number(childText(enhancement as XmlElement, 'maxValue') || NaN);
  if (Number.isNaN(min) || Number.isNaN(max)) throw new Unprocessable(`the style's ${name} has no minimum or maximum`);
  return { algorithm: algorithm as Algorithm, range: { min, max } };
}

function band(renderer: XmlElement, attribute: string): number {
  const value = Number(renderer.attributes.get(attribute));
  if (!Number.isInteger(value) || value < 1) throw new Unprocessable(`the style's ${attribute} is not a band number`);
  return value;
}

function readGray(renderer: XmlElement): SingleBandGrayStyle['symbology'] {
  const limits = limitsOf(renderer);
  const { algorithm, range } = readEnhancement(renderer, 'contrastEnhancement', limits);
  return {
    type: 'singlebandgray',
    properties: {
      gray: { band: band(renderer, 'grayBand') },
      contrast_enhancement: { algorithm, limits_min_max: limits, ...range },
    },
  };
}

function readColour(renderer: XmlElement): MultiBandColorStyle['symbology'] {
  const limits = limitsOf(renderer);
  const read = COLOURS.map((colour) => readEnhancement(renderer, `${colour}ContrastEnhancement`, limits));
  const algorithm = read[0]?.algorithm as Algorithm;
  if (read.some((entry) => entry.algorithm !== algorithm)) {
    throw new Unprocessable('the style enhances its red, green and blue bands with different algorithms');
  }
  const [red, green, blue] = COLOURS.map((colour, i) => ({ band: band(renderer, `${colour}Band`), ...read[i]?.range }));
  return {
    type: 'multibandcolor',
    properties: {
      red: red as ColourBand,
      green: green as ColourBand,
      blue: blue as ColourBand,
      contrast_enhancement: { algorithm, limits_min_max: limits },
    },
  };
}

const INTERPOLATIONS: readonly string[] = ['INTERPOLATED', 'DISCRETE', 'EXACT'];

function readStop(item: XmlElement): ColourStop {
  const value = Number(item.attributes.get('value'));
  if (Number.isNaN(value)) throw new Unprocessable(`a colour stop of the style has no value`);
  const alpha = item.attributes.get('alpha') ?? '255';
  const [r, g, b] = [1, 3, 5].map((at) => parseInt((item.attributes.get('color') ?? '').slice(at, at + 2), 16));
  const colour = styleColour(`${r},${g},${b},${alpha}`);
  return { value, colour, label: item.attributes.get('label') ?? '' };
}

function readPseudoColor(renderer: XmlElement): PseudoColorStyle['symbology'] {
  const shader = path(renderer, 'rastershader', 'colorrampshader');
  const interpolation = shader?.attributes.get('colorRampType') ?? '';
  if (!shader || !INTERPOLATIONS.includes(interpolation)) {
    throw new Unprocessable(
      `the style's colour ramp type "${interpolation}" is not one of ${INTERPOLATIONS.join(', ')}`,
    );
  }
  const min = Number(renderer.attributes.get('classificationMin'));
  const max = Number(renderer.attributes.get('classificationMax'));
  if (Number.isNaN(min) || Number.isNaN(max))
    throw new Unprocessable("the style's colour ramp has no minimum or maximum");
  return {
    type: 'singlebandpseudocolor',
    properties: {
      band: band(renderer, 'band'),
      min,
      max,
      interpolation: interpolation as Interpolation,
      stops: childElements(shader, 'item').map(readStop),
    },
  };
}

function readRendering(pipe: XmlElement, catalogue: SymbologyCatalogue): Required<RasterRendering> {
  const defaults = catalogue.rasterRendering;
  const attribute = (name: string, key: keyof RasterRendering): number => {
    const value = firstChild(pipe, name)?.attributes.get(key);
    return value === undefined ? defaults[key] : Number(value);
  };
  return {
    brightness: attribute('brightnesscontrast', 'brightness'),
    contrast: attribute('brightnesscontrast', 'contrast'),
    gamma: attribute('brightnesscontrast', 'gamma'),
    saturation: attribute('huesaturation', 'saturation'),
  };
}

const READERS: Record<string, (renderer: XmlElement) => RasterStyle['symbology']> = {
  singlebandgray: readGray,
  multibandcolor: readColour,
  singlebandpseudocolor: readPseudoColor,
};

/** Reads a raster QML root (`<qgis>` or `<maplayer>`) back into the style body that made it. */
export function readRasterStyle(root: XmlElement, name: string, catalogue: SymbologyCatalogue): RasterStyle {
  const pipe = firstChild(root, 'pipe');
  const renderer = pipe && firstChild(pipe, 'rasterrenderer');
  const type = renderer?.attributes.get('type') ?? 'missing';
  const reader = Object.hasOwn(READERS, type) ? READERS[type] : undefined;
  if (!pipe || !renderer || !reader) {
    throw new Unprocessable(`the style's raster renderer is ${type}, not ${Object.keys(READERS).join(', ')}`);
  }
  return {
    type: 'raster',
    name,
    rendering: readRendering(pipe, catalogue),
    symbology: reader(renderer),
  } as RasterStyle;
}
