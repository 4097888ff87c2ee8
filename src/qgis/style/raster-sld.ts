/**
 * A raster layer's current style as SLD, the document QGIS Desktop's "Save as SLD" writes for a
 * raster (`QgsRasterLayer::writeSld` and each renderer's `toSld`): an SLD 1.0 `<UserLayer>` whose
 * one rule holds a `<sld:RasterSymbolizer>`, read from the layer's `<pipe>` in the project.
 */
import { qtNumber, readQtNumber } from '../qt-number.js';
import { childElements, childText, element, firstChild, path, textElement, type XmlElement } from '../xml/node.js';
import { desktopLayout } from './sld.js';

/** The minimum of a band (1-based) over the whole raster, which QGIS writes for clipped stretches. */
export type BandMinimum = (band: number) => number | undefined;

type Enhancement =
  'NoEnhancement' | 'StretchToMinimumMaximum' | 'StretchAndClipToMinimumMaximum' | 'ClipToMinimumMaximum';

/** QGIS before April 2013 wrote the algorithm's number. */
const ENHANCEMENTS: Record<string, Enhancement> = {
  '0': 'NoEnhancement',
  '1': 'StretchToMinimumMaximum',
  '2': 'StretchAndClipToMinimumMaximum',
  '3': 'ClipToMinimumMaximum',
  NoEnhancement: 'NoEnhancement',
  StretchToMinimumMaximum: 'StretchToMinimumMaximum',
  StretchAndClipToMinimumMaximum: 'StretchAndClipToMinimumMaximum',
  ClipToMinimumMaximum: 'ClipToMinimumMaximum',
};

/** SLD has one name for both clipping stretches. */
const SLD_ALGORITHM: Record<Exclude<Enhancement, 'NoEnhancement'>, string> = {
  StretchToMinimumMaximum: 'StretchToMinimumMaximum',
  StretchAndClipToMinimumMaximum: 'ClipToMinimumMaximum',
  ClipToMinimumMaximum: 'ClipToMinimumMaximum',
};

const GRAYSCALE_MODES: Record<string, string> = { '1': 'lightness', '2': 'luminosity', '3': 'average' };

const RAMP_TYPES: Record<string, string> = { EXACT: 'values', DISCRETE: 'intervals', INTERPOLATED: 'ramp' };

interface ContrastEnhancement {
  algorithm: Enhancement;
  min: number;
  max: number;
}

interface MapEntry {
  quantity: string;
  colour: string;
  alpha: number;
  label?: string;
}

const attribute = (target: XmlElement | undefined, name: string): string => target?.attributes.get(name) ?? '';
const numberAttribute = (target: XmlElement | undefined, name: string, fallback: number): number => {
  const value = readQtNumber(attribute(target, name));
  return Number.isNaN(value) ? fallback : value;
};
const vendorOption = (name: string, value: string): XmlElement => textElement('sld:VendorOption', value, { name });

function contrastEnhancement(target: XmlElement | undefined): ContrastEnhancement | undefined {
  if (!target) return undefined;
  return {
    algorithm: ENHANCEMENTS[childText(target, 'algorithm')] ?? 'NoEnhancement',
    min: readQtNumber(childText(target, 'minValue')),
    max: readQtNumber(childText(target, 'maxValue')),
  };
}

/** `QgsContrastEnhancement::toSld` into a `<sld:ContrastEnhancement>`; `min` replaces its minimum. */
function contrastEnhancementSld(enhancement: ContrastEnhancement, min = enhancement.min): XmlElement {
  if (enhancement.algorithm === 'NoEnhancement') return element('sld:ContrastEnhancement');
  return element('sld:ContrastEnhancement', {}, [
    element('sld:Normalize', {}, [
      vendorOption('algorithm', SLD_ALGORITHM[enhancement.algorithm]),
      vendorOption('minValue', qtNumber(min)),
      vendorOption('maxValue', qtNumber(enhancement.max)),
    ]),
  ]);
}

function channel(tag: string, band: number, enhancement?: XmlElement): XmlElement {
  const children = [textElement('sld:SourceChannelName', String(band))];
  if (enhancement) children.push(enhancement);
  return element(tag, {}, children);
}

function colourMapEntry(entry: MapEntry): XmlElement {
  const attributes: Record<string, string> = { color: entry.colour.toLowerCase(), quantity: entry.quantity };
  if (entry.label !== undefined) attributes['label'] = entry.label;
  if (entry.alpha !== 255) attributes['opacity'] = qtNumber(entry.alpha / 255);
  return element('sld:ColorMapEntry', attributes);
}

/** The single band gray renderer's colour map, which simulates its stretch as QGIS does. */
function grayColourMap(renderer: XmlElement, enhancement: ContrastEnhancement | undefined): XmlElement {
  const map = element('sld:ColorMap');
  if (!enhancement || enhancement.algorithm === 'NoEnhancement') return map;
  const blackFirst = attribute(renderer, 'gradient') !== 'WhiteToBlack';
  const [low, high] = blackFirst ? ['#000000', '#ffffff'] : ['#ffffff', '#000000'];
  const stretched = enhancement.algorithm === 'StretchToMinimumMaximum';
  const lowEntry = { color: low, quantity: stretched ? '0' : qtNumber(enhancement.min) };
  const highEntry = { color: high, quantity: stretched ? '255' : qtNumber(enhancement.max) };
  // A clipping stretch leaves what lies beyond the limits transparent: an entry of alpha 0 at each end.
  const entries = stretched
    ? [lowEntry, highEntry]
    : [{ ...lowEntry, opacity: '0' }, lowEntry, highEntry, { ...highEntry, opacity: '0' }];
  map.children = entries.map((entry) => element('sld:ColorMapEntry', entry));
  return map;
}

/** Whether the layer's SLD names a band's minimum over the raster: a gray renderer's clipping stretch. */
export function usesBandMinimum(layer: XmlElement): boolean {
  const renderer = path(layer, 'pipe', 'rasterrenderer');
  if (attribute(renderer, 'type') !== 'singlebandgray') return false;
  const enhancement = renderer && contrastEnhancement(firstChild(renderer, 'contrastEnhancement'));
  return enhancement?.algorithm.includes('Clip') ?? false;
}

function singleBandGray(renderer: XmlElement, bandMinimum: BandMinimum): XmlElement[] {
  const band = numberAttribute(renderer, 'grayBand', 1);
  const enhancement = contrastEnhancement(firstChild(renderer, 'contrastEnhancement'));
  let enhancementSld: XmlElement | undefined;
  if (enhancement) {
    const clipped = enhancement.algorithm.includes('Clip');
    const minimum = clipped ? bandMinimum(band) : undefined;
    const differs = minimum !== undefined && Math.abs(minimum - enhancement.min) > 1e-8;
    enhancementSld = contrastEnhancementSld(enhancement, differs ? minimum : enhancement.min);
  }
  return [
    element('sld:ChannelSelection', {}, [channel('sld:GrayChannel', band, enhancementSld)]),
    grayColourMap(renderer, enhancement),
  ];
}

function pseudoColour(renderer: XmlElement): XmlElement[] {
  const selection = element('sld:ChannelSelection', {}, [
    channel('sld:GrayChannel', numberAttribute(renderer, 'band', 1)),
  ]);
  const shader = firstChild(firstChild(renderer, 'rastershader') ?? renderer, 'colorrampshader');
  if (!shader) return [selection];
  const items = childElements(shader, 'item');
  const attributes: Record<string, string> = { type: RAMP_TYPES[attribute(shader, 'colorRampType')] ?? 'ramp' };
  if (items.length >= 255) attributes['extended'] = 'true';
  const entries = items.map((item) =>
    colourMapEntry({
      colour: attribute(item, 'color'),
      quantity: qtNumber(readQtNumber(attribute(item, 'value')), 17),
      label: attribute(item, 'label'),
      alpha: numberAttribute(item, 'alpha', 255),
    }),
  );
  return [selection, element('sld:ColorMap', attributes, entries)];
}

function paletted(renderer: XmlElement): XmlElement[] {
  const entries = childElements(firstChild(renderer, 'colorPalette') ?? renderer, 'paletteEntry');
  const attributes: Record<string, string> = { type: 'values' };
  if (entries.length >= 255) attributes['extended'] = 'true';
  return [
    element('sld:ChannelSelection', {}, [channel('sld:GrayChannel', numberAttribute(renderer, 'band', 1))]),
    element(
      'sld:ColorMap',
      attributes,
      entries.map((entry) =>
        colourMapEntry({
          colour: attribute(entry, 'color'),
          quantity: qtNumber(readQtNumber(attribute(entry, 'value'))),
          label: attribute(entry, 'label'),
          alpha: numberAttribute(entry, 'alpha', 255),
        }),
      ),
    ),
  ];
}

function multiBandColour(renderer: XmlElement): XmlElement[] {
  // QGIS numbers the channels by the bands in use, so an unused band moves the next ones up.
  const used = (['red', 'green', 'blue'] as const)
    .map((colour) => numberAttribute(renderer, `${colour}Band`, -1))
    .filter((band) => band >= 0);
  const tags = ['sld:RedChannel', 'sld:GreenChannel', 'sld:BlueChannel'];
  const enhancements = ['red', 'green', 'blue'].map((colour) =>
    contrastEnhancement(firstChild(renderer, `${colour}ContrastEnhancement`)),
  );
  const channels = used.map((band, index) => {
    const enhancement = enhancements[index];
    return channel(tags[index]!, band, enhancement ? contrastEnhancementSld(enhancement) : undefined);
  });
  return [element('sld:ChannelSelection', {}, channels)];
}

function hillshade(renderer: XmlElement): XmlElement[] {
  const band = numberAttribute(renderer, 'band', 1);
  const relief = element('sld:ShadedRelief', {}, [
    textElement('sld:BrightnessOnly', 'true'),
    textElement('sld:ReliefFactor', qtNumber(numberAttribute(renderer, 'zfactor', 1))),
    vendorOption('altitude', qtNumber(numberAttribute(renderer, 'angle', 45))),
    vendorOption('azimuth', qtNumber(numberAttribute(renderer, 'azimuth', 315))),
    vendorOption('multidirectional', attribute(renderer, 'multidirection') === '1' ? '1' : '0'),
  ]);
  if (band === 1) return [relief];
  return [element('sld:ChannelSelection', {}, [channel('sld:GrayChannel', band)]), relief];
}

/** What each renderer writes after the `<sld:Opacity>` of every renderer. */
function rendererSld(renderer: XmlElement, bandMinimum: BandMinimum): XmlElement[] {
  switch (attribute(renderer, 'type')) {
    case 'singlebandgray':
      return singleBandGray(renderer, bandMinimum);
    case 'singlebandpseudocolor':
      return pseudoColour(renderer);
    case 'paletted':
      return paletted(renderer);
    case 'multibandcolor':
      return multiBandColour(renderer);
    case 'hillshade':
      return hillshade(renderer);
    default:
      return [];
  }
}

/** What the layer's filters add to the symbolizer: colour inversion, grayscale, saturation, brightness, contrast. */
function layerVendorOptions(pipe: XmlElement | undefined): XmlElement[] {
  const hue = pipe && firstChild(pipe, 'huesaturation');
  const brightness = pipe && firstChild(pipe, 'brightnesscontrast');
  const options: XmlElement[] = [];
  if (attribute(hue, 'invertColors') === '1') options.push(vendorOption('invertColors', '1'));
  const grayscale = GRAYSCALE_MODES[attribute(hue, 'grayscaleMode')];
  if (grayscale) options.push(vendorOption('grayScale', grayscale));
  if (attribute(hue, 'colorizeOn') === '1') {
    options.push(vendorOption('colorizeOn', '1'));
    const rgb = ['Red', 'Green', 'Blue'].map((colour) => {
      const value = numberAttribute(hue, `colorize${colour}`, 0);
      options.push(vendorOption(`colorize${colour}`, String(value)));
      return value;
    });
    const strength = numberAttribute(hue, 'colorizeStrength', 100);
    if (strength !== 100) options.push(vendorOption('colorizeStrength', qtNumber(strength / 100)));
    options.push(vendorOption('saturation', qtNumber(hsvSaturation(rgb))));
  } else {
    const saturation = numberAttribute(hue, 'saturation', 0);
    if (saturation !== 0) options.push(vendorOption('saturation', qtNumber((saturation + 100) / 200)));
  }
  const bright = numberAttribute(brightness, 'brightness', 0);
  if (bright !== 0) options.push(vendorOption('brightness', qtNumber((bright + 255) / 510)));
  const contrast = numberAttribute(brightness, 'contrast', 0);
  if (contrast !== 0) options.push(vendorOption('contrast', qtNumber((contrast + 100) / 200)));
  return options;
}

/** `QColor::saturationF()`, which Qt keeps in sixteen bits. */
function hsvSaturation(rgb: number[]): number {
  const max = Math.max(...rgb) / 255;
  const min = Math.min(...rgb) / 255;
  return max === 0 ? 0 : Math.round(((max - min) / max) * 65535) / 65535;
}

function scaleDenominators(layer: XmlElement): XmlElement[] {
  if (attribute(layer, 'hasScaleBasedVisibilityFlag') !== '1') return [];
  // QGIS's maximum scale is SLD's minimum denominator, and its minimum scale the maximum.
  const maximum = numberAttribute(layer, 'maxScale', 0);
  const denominators = maximum === 0 ? [] : [textElement('sld:MinScaleDenominator', qtNumber(maximum))];
  denominators.push(textElement('sld:MaxScaleDenominator', qtNumber(numberAttribute(layer, 'minScale', 0))));
  return denominators;
}

function symbolizer(pipe: XmlElement | undefined, bandMinimum: BandMinimum): XmlElement[] {
  const renderer = pipe && firstChild(pipe, 'rasterrenderer');
  if (!renderer) return [];
  const children: XmlElement[] = [];
  const opacity = numberAttribute(renderer, 'opacity', 1);
  if (Math.abs(opacity - 1) > 1e-8) children.push(textElement('sld:Opacity', qtNumber(opacity)));
  children.push(...rendererSld(renderer, bandMinimum), ...layerVendorOptions(pipe));
  return [element('sld:RasterSymbolizer', {}, children)];
}

/** The SLD QGIS Desktop saves for the raster layer `layer` (its `<maplayer>`), drawn with its current style. */
export function rasterSld(layer: XmlElement, bandMinimum: BandMinimum): string {
  const pipe = firstChild(layer, 'pipe');
  const style: XmlElement[] = [];
  for (const [tag, value] of [
    ['sld:Name', childText(layer, 'layername')],
    ['sld:Abstract', childText(layer, 'abstract')],
    ['sld:Title', childText(layer, 'title')],
  ] as const) {
    if (value !== '') style.push(textElement(tag, value));
  }
  const rule = element('sld:Rule', {}, [...scaleDenominators(layer), ...symbolizer(pipe, bandMinimum)]);
  style.push(element('sld:FeatureTypeStyle', {}, [rule]));
  const root = element(
    'StyledLayerDescriptor',
    {
      xmlns: 'http://www.opengis.net/sld',
      'xmlns:ogc': 'http://www.opengis.net/ogc',
      version: '1.0.0',
      'xmlns:gml': 'http://www.opengis.net/gml',
      'xmlns:sld': 'http://www.opengis.net/sld',
    },
    [
      element('UserLayer', {}, [
        element('sld:LayerFeatureConstraints', {}, [element('sld:FeatureTypeConstraint')]),
        element('sld:UserStyle', {}, style),
      ]),
    ],
  );
  return desktopLayout(root);
}
