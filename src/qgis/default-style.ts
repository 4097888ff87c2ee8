/**
 * The `default` style of a new layer, as a style of the codec (`style/`), so a default layer's
 * elements are written exactly as any other style's: a single symbol in QGIS's default colours for
 * vectors; for rasters, RGB from bands 1-3 when there are three or more, grey otherwise.
 */
import { geometryClass } from './geometry.js';
import type { MultiBandColorStyle, SingleBandGrayStyle, Style, VectorStyle } from './style/schema.js';

const DEFAULT_STYLE_NAME = 'default';

/** The symbol properties of the default style that differ from QGIS's symbol layer defaults. */
const DEFAULT_SYMBOL_PROPERTIES: Record<VectorStyle['symbology']['symbol'], Record<string, string>> = {
  marker: { name: 'circle', color: '232,113,141,255', outline_color: '35,35,35,255', outline_width: '0', size: '2' },
  line: { line_color: '213,23,125,255', line_style: 'solid', line_width: '0.26' },
  fill: {
    color: '229,182,54,255',
    style: 'solid',
    outline_color: '35,35,35,255',
    outline_style: 'solid',
    outline_width: '0.26',
  },
};

/** The renderer QGIS draws a vector layer of this geometry with before any style is applied. */
export function defaultVectorStyle(geometry: string): VectorStyle {
  const symbol = geometryClass('layer', geometry)?.symbol ?? 'fill';
  return {
    name: DEFAULT_STYLE_NAME,
    type: 'vector',
    rendering: {},
    symbology: { type: 'single_symbol', symbol, properties: DEFAULT_SYMBOL_PROPERTIES[symbol] },
  };
}

type BandRange = { min: number; max: number };

/** The pipe QGIS builds for a raster: RGB Byte rasters drawn as they are, everything else stretched over its range. */
export function defaultRasterStyle(dataType: string, bandRanges: readonly BandRange[]): Style {
  const range = (band: number): BandRange => bandRanges[band - 1] ?? { min: 0, max: 255 };
  if (bandRanges.length < 3) {
    const gray: SingleBandGrayStyle = {
      name: DEFAULT_STYLE_NAME,
      type: 'raster',
      symbology: {
        type: 'singlebandgray',
        properties: {
          gray: { band: 1 },
          contrast_enhancement: { algorithm: 'StretchToMinimumMaximum', limits_min_max: 'UserDefined', ...range(1) },
        },
      },
    };
    return gray;
  }
  const algorithm = dataType === 'Byte' ? 'NoEnhancement' : 'StretchToMinimumMaximum';
  const colour: MultiBandColorStyle = {
    name: DEFAULT_STYLE_NAME,
    type: 'raster',
    symbology: {
      type: 'multibandcolor',
      properties: {
        red: { band: 1, ...range(1) },
        green: { band: 2, ...range(2) },
        blue: { band: 3, ...range(3) },
        contrast_enhancement: { algorithm, limits_min_max: 'UserDefined' },
      },
    },
  };
  return colour;
}
