/** Request bodies that the storm and multi-process tests send over and over. */

/** A vector layer of the fixtures' polygons. */
export function polygonLayer(name: string, geopackage: string): Record<string, unknown> {
  return { type: 'vector', name, datasource: `${geopackage}|layername=polygons` };
}

/** A single-symbol fill style of the given colour (`#RRGGBB`). */
export function fillStyle(name: string, color: string): Record<string, unknown> {
  return {
    type: 'vector',
    name,
    rendering: { opacity: 1 },
    symbology: { type: 'single_symbol', symbol: 'fill', properties: { color, style: 'solid', outline_width: 0.5, outline_color: '#000000' } },
  };
}
