import { type GeometryClass, geometryClass } from './geometry.js';
import { formatNumber } from './layer.js';
import { rasterFilters } from './style/raster-qml.js';
import { element, textElement, type XmlElement } from './xml/node.js';

/** The symbol layer class and properties of the `default` style, by the kind of symbol. */
const DEFAULT_SYMBOLS: Record<GeometryClass['symbol'], { layerClass: string; properties: Record<string, string> }> = {
  marker: {
    layerClass: 'SimpleMarker',
    properties: {
      name: 'circle',
      color: '232,113,141,255',
      outline_color: '35,35,35,255',
      outline_width: '0',
      size: '2',
    },
  },
  line: {
    layerClass: 'SimpleLine',
    properties: { line_color: '213,23,125,255', line_style: 'solid', line_width: '0.26' },
  },
  fill: {
    layerClass: 'SimpleFill',
    properties: {
      color: '229,182,54,255',
      style: 'solid',
      outline_color: '35,35,35,255',
      outline_style: 'solid',
      outline_width: '0.26',
    },
  },
};

function optionMap(properties: Record<string, string>): XmlElement {
  return element(
    'Option',
    { type: 'Map' },
    Object.entries(properties).map(([name, value]) => element('Option', { type: 'QString', name, value })),
  );
}

/** The renderer QGIS draws a vector layer with before any style is applied. */
export function defaultVectorStyle(geometry: string): XmlElement[] {
  const kind = geometryClass('layer', geometry)?.symbol ?? 'fill';
  const symbol = DEFAULT_SYMBOLS[kind];
  const symbolLayer = element('layer', { class: symbol.layerClass, enabled: '1', locked: '0', pass: '0' }, [
    optionMap(symbol.properties),
  ]);
  const renderer = element(
    'renderer-v2',
    { type: 'singleSymbol', symbollevels: '0', forceraster: '0', enableorderby: '0', referencescale: '-1' },
    [
      element('symbols', {}, [
        element('symbol', { type: kind, name: '0', alpha: '1', clip_to_extent: '1', force_rhr: '0' }, [symbolLayer]),
      ]),
      element('rotation'),
      element('sizescale'),
    ],
  );
  return [renderer, textElement('layerOpacity', '1')];
}

function contrastEnhancement(name: string, range: { min: number; max: number }, stretch: boolean): XmlElement {
  const algorithm = stretch ? 'StretchToMinimumMaximum' : 'NoEnhancement';
  return element(name, {}, [
    textElement('minValue', formatNumber(range.min)),
    textElement('maxValue', formatNumber(range.max)),
    textElement('algorithm', algorithm),
  ]);
}

/** The pipe QGIS builds for a raster: RGB from bands 1-3 when there are three or more, grey otherwise. */
export function defaultRasterStyle(dataType: string, bandRanges: Array<{ min: number; max: number }>): XmlElement[] {
  const range = (band: number): { min: number; max: number } => bandRanges[band - 1] ?? { min: 0, max: 255 };
  // As QGIS does: RGB Byte rasters are drawn as they are, everything else is stretched over its range.
  const stretchColours = dataType !== 'Byte';
  const renderer =
    bandRanges.length >= 3
      ? element(
          'rasterrenderer',
          {
            type: 'multibandcolor',
            opacity: '1',
            alphaBand: '-1',
            redBand: '1',
            greenBand: '2',
            blueBand: '3',
            nodataColor: '',
          },
          [
            element('rasterTransparency'),
            contrastEnhancement('redContrastEnhancement', range(1), stretchColours),
            contrastEnhancement('greenContrastEnhancement', range(2), stretchColours),
            contrastEnhancement('blueContrastEnhancement', range(3), stretchColours),
          ],
        )
      : element(
          'rasterrenderer',
          {
            type: 'singlebandgray',
            opacity: '1',
            alphaBand: '-1',
            grayBand: '1',
            gradient: 'BlackToWhite',
            nodataColor: '',
          },
          [element('rasterTransparency'), contrastEnhancement('contrastEnhancement', range(1), true)],
        );
  return [
    element('pipe', {}, [
      renderer,
      ...rasterFilters({ brightness: 0, contrast: 0, gamma: 1, saturation: 0 }),
      element('rasterresampler', { maxOversampling: '2' }),
      textElement('resamplingStage', 'resamplingFilter'),
    ]),
  ];
}
