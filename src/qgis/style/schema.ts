/**
 * The style bodies of the API as TypeBox schemas.
 *
 * Where user-defined limits go: a singlebandgray style has one band, so its `min`/`max` sit in
 * `contrast_enhancement`; a multibandcolor style gives them per band (`red.min`, `red.max`...).
 * They are required with `limits_min_max: "UserDefined"` and refused with `"MinMax"`, whose limits
 * are the statistics of the layer the style is applied to.
 */
import { type Static, Type } from '@sinclair/typebox';

const strict = { additionalProperties: false } as const;

export const SymbolKindSchema = Type.Union([Type.Literal('marker'), Type.Literal('line'), Type.Literal('fill')]);

/** Keys are the symbol layer's QGIS property names; values are written as QGIS strings. */
export const SymbolPropertiesSchema = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]));

export const VectorStyleSchema = Type.Object(
  {
    type: Type.Literal('vector'),
    name: Type.String({ minLength: 1 }),
    rendering: Type.Optional(Type.Object({ opacity: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })) }, strict)),
    symbology: Type.Object(
      {
        type: Type.Literal('single_symbol'),
        symbol: SymbolKindSchema,
        properties: Type.Optional(SymbolPropertiesSchema),
      },
      strict,
    ),
  },
  strict,
);
export type VectorStyle = Static<typeof VectorStyleSchema>;

/** Ranges of QgsBrightnessContrastFilter and QgsHueSaturationFilter. */
export const RasterRenderingSchema = Type.Object(
  {
    brightness: Type.Optional(Type.Integer({ minimum: -255, maximum: 255 })),
    contrast: Type.Optional(Type.Integer({ minimum: -100, maximum: 100 })),
    gamma: Type.Optional(Type.Number({ minimum: 0.1, maximum: 10 })),
    saturation: Type.Optional(Type.Integer({ minimum: -100, maximum: 100 })),
  },
  strict,
);
export type RasterRendering = Static<typeof RasterRenderingSchema>;

const Band = Type.Integer({ minimum: 1 });
const Algorithm = Type.Union([Type.Literal('StretchToMinimumMaximum'), Type.Literal('NoEnhancement')]);
export type Algorithm = Static<typeof Algorithm>;
const Limits = Type.Union([Type.Literal('MinMax'), Type.Literal('UserDefined')]);
export type Limits = Static<typeof Limits>;

const GrayEnhancement = Type.Object(
  {
    algorithm: Algorithm,
    limits_min_max: Limits,
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
  },
  strict,
);
const ColourEnhancement = Type.Object({ algorithm: Algorithm, limits_min_max: Limits }, strict);
const ColourBand = Type.Object(
  { band: Band, min: Type.Optional(Type.Number()), max: Type.Optional(Type.Number()) },
  strict,
);
export type ColourBand = Static<typeof ColourBand>;

export const SingleBandGraySymbologySchema = Type.Object(
  {
    type: Type.Literal('singlebandgray'),
    properties: Type.Object(
      { gray: Type.Object({ band: Band }, strict), contrast_enhancement: Type.Optional(GrayEnhancement) },
      strict,
    ),
  },
  strict,
);

export const MultiBandColorSymbologySchema = Type.Object(
  {
    type: Type.Literal('multibandcolor'),
    properties: Type.Object(
      { red: ColourBand, green: ColourBand, blue: ColourBand, contrast_enhancement: Type.Optional(ColourEnhancement) },
      strict,
    ),
  },
  strict,
);

function rasterStyle<T extends typeof SingleBandGraySymbologySchema | typeof MultiBandColorSymbologySchema>(
  symbology: T,
) {
  return Type.Object(
    {
      type: Type.Literal('raster'),
      name: Type.String({ minLength: 1 }),
      rendering: Type.Optional(RasterRenderingSchema),
      symbology,
    },
    strict,
  );
}

export const SingleBandGrayStyleSchema = rasterStyle(SingleBandGraySymbologySchema);
export const MultiBandColorStyleSchema = rasterStyle(MultiBandColorSymbologySchema);
export type SingleBandGrayStyle = Static<typeof SingleBandGrayStyleSchema>;
export type MultiBandColorStyle = Static<typeof MultiBandColorStyleSchema>;
export type RasterStyle = SingleBandGrayStyle | MultiBandColorStyle;

/** Any style body Steward accepts (for route schemas and OpenAPI). */
export const StyleSchema = Type.Union([VectorStyleSchema, SingleBandGrayStyleSchema, MultiBandColorStyleSchema]);
export type Style = Static<typeof StyleSchema>;
