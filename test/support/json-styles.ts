/** JSON styles of the corpus fixtures (test/support/style-corpus.ts) that several tests draw. */

/** A marker of 5 mm without an outline, the points' symbol. */
export const MARKER = { size: 5, outline_style: 'no' };

/** The fixture's points are named points-0, points-1 and points-2: two categories and the others. */
export function byName(
  name: string,
  field = 'name',
): {
  type: 'vector';
  name: string;
  symbology: Record<string, unknown> & { categories: Array<{ value: string; label: string; colour: string }> };
} {
  return {
    type: 'vector',
    name,
    symbology: {
      type: 'categorized',
      symbol: 'marker',
      properties: MARKER,
      field,
      categories: [
        { value: 'points-0', label: 'first', colour: '#FF0000' },
        { value: 'points-1', label: 'second', colour: '#0000FF' },
      ],
      other: { label: 'others', colour: '#00FF00' },
    },
  };
}

/** The DEM rises from about 0 at its edges to 100 at its centre: three discrete classes. */
export const RELIEF = {
  type: 'raster',
  name: 'relief',
  symbology: {
    type: 'singlebandpseudocolor',
    properties: {
      band: 1,
      min: 0,
      max: 100,
      interpolation: 'DISCRETE',
      stops: [
        { value: 30, colour: '#000080', label: 'low' },
        { value: 70, colour: '#00C000', label: 'middle' },
        { value: 100, colour: '#FF8000', label: 'high' },
      ],
    },
  },
};
