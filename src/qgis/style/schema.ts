/**
 * The style bodies of the API as TypeBox schemas.
 *
 * Where user-defined limits go: a singlebandgray style has one band, so its `min`/`max` sit in
 * `contrast_enhancement`; a multibandcolor style gives them per band (`red.min`, `red.max`...).
 * They are required with `limits_min_max: "UserDefined"` and refused with `"MinMax"`, whose limits
 * are the statistics of the layer the style is applied to.
 *
 * A categorized or graduated style has one symbol (`symbol`, `properties`) that every class draws
 * with, in the class's own colour; a singlebandpseudocolor style gives its colour stops and the
 * band's `min`/`max` itself (QGIS's user-defined limits).
 */
import { type Static, Type } from '@sinclair/typebox';

const strict = { additionalProperties: false } as const;

export const SymbolKindSchema = Type.Union([Type.Literal('marker'), Type.Literal('line'), Type.Literal('fill')]);

/** Keys are the symbol layer's QGIS property names; values are written as QGIS strings. */
export const SymbolPropertiesSchema = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]));

const SymbolFields = {
  symbol: SymbolKindSchema,
  /** Shared by every class of a categorized or graduated renderer; each class sets its own colour. */
  properties: Type.Optional(SymbolPropertiesSchema),
};

const Colour = Type.String({ minLength: 1, description: '#RRGGBB or r,g,b[,a] (0-255)' });
const FieldName = Type.String({ minLength: 1, description: 'a field of the layer (not an expression)' });

export const SingleSymbolSchema = Type.Object({ type: Type.Literal('single_symbol'), ...SymbolFields }, strict);

export const CategorySchema = Type.Object(
  {
    value: Type.Union([Type.String({ minLength: 1 }), Type.Number()]),
    label: Type.Optional(Type.String()),
    colour: Colour,
  },
  strict,
);
export type Category = Static<typeof CategorySchema>;

export const CategorizedSchema = Type.Object(
  {
    type: Type.Literal('categorized'),
    ...SymbolFields,
    field: FieldName,
    categories: Type.Array(CategorySchema, { minItems: 1 }),
    /** The symbol of every other value (QGIS's category of the empty value). */
    other: Type.Optional(Type.Object({ label: Type.Optional(Type.String()), colour: Colour }, strict)),
  },
  strict,
);

export const RangeSchema = Type.Object(
  { lower: Type.Number(), upper: Type.Number(), label: Type.Optional(Type.String()), colour: Colour },
  strict,
);
export type Range = Static<typeof RangeSchema>;

export const GraduatedSchema = Type.Object(
  {
    type: Type.Literal('graduated'),
    ...SymbolFields,
    field: FieldName,
    ranges: Type.Array(RangeSchema, { minItems: 1 }),
  },
  strict,
);

export type Categorized = Static<typeof CategorizedSchema>;
export type Graduated = Static<typeof GraduatedSchema>;

function vectorStyle<T extends typeof SingleSymbolSchema | typeof CategorizedSchema | typeof GraduatedSchema>(
  symbology: T,
) {
  return Type.Object(
    {
      type: Type.Literal('vector'),
      name: Type.String({ minLength: 1 }),
      rendering: Type.Optional(
        Type.Object({ opacity: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })) }, strict),
      ),
      symbology,
    },
    strict,
  );
}

export const SingleSymbolStyleSchema = vectorStyle(SingleSymbolSchema);
export const CategorizedStyleSchema = vectorStyle(CategorizedSchema);
export const GraduatedStyleSchema = vectorStyle(GraduatedSchema);
export const VectorStyleSchema = Type.Union([SingleSymbolStyleSchema, CategorizedStyleSchema, GraduatedStyleSchema]);
export type VectorStyle = Static<typeof VectorStyleSchema>;
export type VectorSymbology = VectorStyle['symbology'];

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

const Interpolation = Type.Union([Type.Literal('INTERPOLATED'), Type.Literal('DISCRETE'), Type.Literal('EXACT')]);
export type Interpolation = Static<typeof Interpolation>;

export const ColourStopSchema = Type.Object(
  { value: Type.Number(), colour: Colour, label: Type.Optional(Type.String()) },
  strict,
);
export type ColourStop = Static<typeof ColourStopSchema>;

export const PseudoColorSymbologySchema = Type.Object(
  {
    type: Type.Literal('singlebandpseudocolor'),
    properties: Type.Object(
      {
        band: Band,
        min: Type.Number(),
        max: Type.Number(),
        /** How values between stops are coloured, QGIS's colorRampType. */
        interpolation: Type.Optional(Interpolation),
        stops: Type.Array(ColourStopSchema, { minItems: 1 }),
      },
      strict,
    ),
  },
  strict,
);

function rasterStyle<
  T extends
    typeof SingleBandGraySymbologySchema | typeof MultiBandColorSymbologySchema | typeof PseudoColorSymbologySchema,
>(symbology: T) {
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
export const PseudoColorStyleSchema = rasterStyle(PseudoColorSymbologySchema);
export type SingleBandGrayStyle = Static<typeof SingleBandGrayStyleSchema>;
export type MultiBandColorStyle = Static<typeof MultiBandColorStyleSchema>;
export type PseudoColorStyle = Static<typeof PseudoColorStyleSchema>;
export type RasterStyle = SingleBandGrayStyle | MultiBandColorStyle | PseudoColorStyle;

/** Any style body Steward accepts (for route schemas and OpenAPI). */
export const StyleSchema = Type.Union([
  VectorStyleSchema,
  SingleBandGrayStyleSchema,
  MultiBandColorStyleSchema,
  PseudoColorStyleSchema,
]);
export type Style = Static<typeof StyleSchema>;
