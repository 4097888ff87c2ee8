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
