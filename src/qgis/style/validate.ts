import type { TSchema } from '@sinclair/typebox';
import { Value, type ValueError, ValueErrorType } from '@sinclair/typebox/value';

import { BadRequest } from '../../errors.js';
import type { SymbologyCatalogue } from '../symbology/catalogue.js';
import { qgisColour } from './colour.js';
import {
  CategorizedStyleSchema,
  type ColourBand,
  GraduatedStyleSchema,
  type Limits,
  MultiBandColorStyleSchema,
  type PseudoColorStyle,
  PseudoColorStyleSchema,
  type RasterStyle,
  SingleBandGrayStyleSchema,
  SingleSymbolStyleSchema,
  type Style,
  type VectorStyle,
  type VectorSymbology,
} from './schema.js';
import { categoryValue, CLASS_COLOUR } from './vector-qml.js';

function label(path: string): string {
  return path === '' ? 'the style' : path.slice(1).replaceAll('/', '.');
}

/** The `const` (or else `type`) of each member of a union schema. */
function unionMembers(schema: TSchema, key: 'const' | 'type'): unknown[] | undefined {
  const options: unknown = schema['anyOf'];
  if (!Array.isArray(options)) return undefined;
  const values = options.map((option: TSchema) => option[key] as unknown);
  return values.every((value) => value !== undefined) ? values : undefined;
}

function sentence(error: ValueError): string {
  const where = label(error.path);
  const got = JSON.stringify(error.value);
  const allowed = unionMembers(error.schema, 'const');
  if (allowed) return `${where} must be one of ${allowed.join(', ')}, not ${got}.`;
  const types = unionMembers(error.schema, 'type');
  if (types) return `${where} must be a ${types.join(' or a ')}, not ${got}.`;
  if (error.type === ValueErrorType.ObjectRequiredProperty) return `${where} is required.`;
  if (error.type === ValueErrorType.ObjectAdditionalProperties) return `${where} is not a known member.`;
  return `${where}: ${error.message.toLowerCase()}, not ${got}.`;
}

function check<T extends TSchema>(schema: T, body: unknown): void {
  const error = Value.Errors(schema, body).First();
  if (error) throw new BadRequest(`Invalid style: ${sentence(error)}`);
}

function member(body: unknown, key: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[key] : undefined;
}

/** The style schema of each renderer, by the style's type and its symbology's type. */
const RENDERER_SCHEMAS: Record<Style['type'], Record<string, TSchema>> = {
  vector: {
    single_symbol: SingleSymbolStyleSchema,
    categorized: CategorizedStyleSchema,
    graduated: GraduatedStyleSchema,
  },
  raster: {
    singlebandgray: SingleBandGrayStyleSchema,
    multibandcolor: MultiBandColorStyleSchema,
    singlebandpseudocolor: PseudoColorStyleSchema,
  },
};

function rendererSchema(type: Style['type'], body: unknown): TSchema {
  const renderers = RENDERER_SCHEMAS[type];
  const renderer = member(member(body, 'symbology'), 'type');
  const schema = typeof renderer === 'string' && Object.hasOwn(renderers, renderer) ? renderers[renderer] : undefined;
  if (schema) return schema;
  throw new BadRequest(
    `Invalid style: symbology.type must be one of ${Object.keys(renderers).join(', ')}, not ${JSON.stringify(renderer)}.`,
  );
}

function checkProperty(symbol: string, key: string, value: string | number, catalogue: SymbologyCatalogue): void {
  const known = catalogue.symbolLayer(symbol as VectorStyle['symbology']['symbol']).properties;
  const property = Object.hasOwn(known, key) ? known[key] : undefined;
  if (property === undefined) {
    throw new BadRequest(
      `Invalid style: "${key}" is not a property of a ${symbol} symbol; known properties: ${Object.keys(known).join(', ')}.`,
    );
  }
  if (property.colour) qgisColour(String(value), key);
  if (property.values && !property.values.includes(String(value))) {
    throw new BadRequest(
      `Invalid style: ${key} must be one of ${property.values.join(', ')}, not ${JSON.stringify(value)}.`,
    );
  }
}

function checkClasses(symbology: VectorSymbology): void {
  if (symbology.type === 'single_symbol') return;
  const colourKey = CLASS_COLOUR[symbology.symbol];
  if (symbology.properties && Object.hasOwn(symbology.properties, colourKey)) {
    throw new BadRequest(
      `Invalid style: ${colourKey} is each class's own colour in a ${symbology.type} style: give it as the classes' "colour".`,
    );
  }
  if (symbology.type === 'categorized') {
    const seen = new Set<string>();
    symbology.categories.forEach((category, index) => {
      qgisColour(category.colour, `symbology.categories.${index}.colour`);
      const value = categoryValue(category.value);
      if (seen.has(value)) throw new BadRequest(`Invalid style: the category of value "${value}" is given twice.`);
      seen.add(value);
    });
    if (symbology.other) qgisColour(symbology.other.colour, 'symbology.other.colour');
    return;
  }
  symbology.ranges.forEach((range, index) => {
    qgisColour(range.colour, `symbology.ranges.${index}.colour`);
    if (range.lower > range.upper) {
      throw new BadRequest(
        `Invalid style: symbology.ranges.${index} has its lower bound ${range.lower} above its upper bound ${range.upper}.`,
      );
    }
  });
}

function checkVector(style: VectorStyle, catalogue: SymbologyCatalogue): void {
  const { symbol, properties = {} } = style.symbology;
  for (const [key, value] of Object.entries(properties)) checkProperty(symbol, key, value, catalogue);
  checkClasses(style.symbology);
}

function checkPseudoColor(properties: PseudoColorStyle['symbology']['properties']): void {
  if (properties.min > properties.max) {
    throw new BadRequest(
      `Invalid style: symbology.properties.min (${properties.min}) is above symbology.properties.max (${properties.max}).`,
    );
  }
  properties.stops.forEach((stop, index) => {
    qgisColour(stop.colour, `symbology.properties.stops.${index}.colour`);
    const previous = properties.stops[index - 1];
    if (previous && previous.value >= stop.value) {
      throw new BadRequest(
        `Invalid style: the colour stops must rise; stop ${index} (${stop.value}) is not above stop ${index - 1} (${previous.value}).`,
      );
    }
  });
}

/** UserDefined limits need a min and a max for every band; MinMax limits come from the layer. */
function checkLimits(limits: Limits, bands: Array<[string, { min?: number; max?: number }]>): void {
  for (const [where, range] of bands) {
    for (const end of ['min', 'max'] as const) {
      if (limits === 'UserDefined' && range[end] === undefined) {
        throw new BadRequest(`Invalid style: ${where}.${end} is required when limits_min_max is UserDefined.`);
      }
      if (limits === 'MinMax' && range[end] !== undefined) {
        throw new BadRequest(
          `Invalid style: ${where}.${end} is only used when limits_min_max is UserDefined; with MinMax the layer's statistics are the limits.`,
        );
      }
    }
  }
}

function checkRaster(style: RasterStyle, catalogue: SymbologyCatalogue): void {
  if (style.symbology.type === 'singlebandpseudocolor') return checkPseudoColor(style.symbology.properties);
  const { type, properties } = style.symbology;
  const limits =
    properties.contrast_enhancement?.limits_min_max ??
    catalogue.rasterRenderer(type).contrast_enhancement.limits_min_max;
  if ('gray' in properties) {
    checkLimits(limits as Limits, [
      ['symbology.properties.contrast_enhancement', properties.contrast_enhancement ?? {}],
    ]);
    return;
  }
  const bands: Array<[string, ColourBand]> = [
    ['symbology.properties.red', properties.red],
    ['symbology.properties.green', properties.green],
    ['symbology.properties.blue', properties.blue],
  ];
  checkLimits(limits as Limits, bands);
}

/** Checks a style body against the style schema and the catalogue; throws BadRequest naming what is wrong. */
export function parseStyle(body: unknown, catalogue: SymbologyCatalogue): Style {
  const type = member(body, 'type');
  if (type === 'vector') {
    check(rendererSchema(type, body), body);
    checkVector(body as VectorStyle, catalogue);
  } else if (type === 'raster') {
    check(rendererSchema(type, body), body);
    checkRaster(body as RasterStyle, catalogue);
  } else {
    throw new BadRequest(`Invalid style: type must be one of vector, raster, not ${JSON.stringify(type)}.`);
  }
  return body as Style;
}
