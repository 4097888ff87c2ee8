/** Request bodies that many tests send: a polygon layer of the fixtures, a plain fill style. */

/** A vector layer of the fixtures' polygons. */
export function polygonLayer(name: string, geopackage: string): Record<string, unknown> {
  return { type: 'vector', name, datasource: `${geopackage}|layername=polygons` };
}

/** A single-symbol fill style of the given colour, without outline, so its colour fills the polygon. */
export function fillStyle(name: string, color: string, opacity = 1): Record<string, unknown> {
  return {
    type: 'vector',
    name,
    rendering: { opacity },
    symbology: {
      type: 'single_symbol',
      symbol: 'fill',
      properties: { color, style: 'solid', outline_width: 0, outline_style: 'no' },
    },
  };
}

/**
 * A JSON singleband gray style stretched between `limits`, or without them between the minimum and
 * maximum of the layer it is applied to.
 */
export function grayStretch(name: string, limits?: { min: number; max: number }): Record<string, unknown> {
  const range = limits ? { limits_min_max: 'UserDefined', ...limits } : { limits_min_max: 'MinMax' };
  return {
    type: 'raster',
    name,
    rendering: {},
    symbology: {
      type: 'singlebandgray',
      properties: {
        gray: { band: 1 },
        contrast_enhancement: { algorithm: 'StretchToMinimumMaximum', ...range },
      },
    },
  };
}
