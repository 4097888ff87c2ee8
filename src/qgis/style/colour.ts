import { BadRequest } from '../../errors.js';

const HEX = /^#([0-9a-fA-F]{2})([0-9a-fA-F]{2})([0-9a-fA-F]{2})$/;
const COMPONENTS = /^\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*(?:,\s*(\d{1,3})\s*)?$/;
/** QGIS 3.28 and later follow `r,g,b,a` with the colour in its own model: `,rgb:0.2,0.4,1,1` (or hsv, cmyk...). */
const MODEL_SUFFIX = /^(\d{1,3},\d{1,3},\d{1,3},\d{1,3}),(?:rgb|hsv|hsl|cmyk):[-\d.e,]*$/;

function components(value: string): number[] | undefined {
  const modelled = MODEL_SUFFIX.exec(value);
  if (modelled?.[1] !== undefined) return components(modelled[1]);
  const hex = HEX.exec(value);
  if (hex) return [...hex.slice(1, 4).map((part) => parseInt(part, 16)), 255];
  const listed = COMPONENTS.exec(value);
  if (!listed) return undefined;
  const numbers = listed.slice(1, 5).map((part) => (part === undefined ? 255 : Number(part)));
  return numbers.every((n) => n <= 255) ? numbers : undefined;
}

/**
 * `#RRGGBB` or `r,g,b[,a]` (0-255; a QGIS default may carry its colour-model suffix) -> `r,g,b,a`,
 * which every QGIS from 3.22 on reads; BadRequest naming `key` otherwise.
 */
export function qgisColour(value: string, key: string): string {
  const parsed = components(value);
  if (!parsed) {
    throw new BadRequest(`"${value}" is not a colour for ${key}: use #RRGGBB or r,g,b[,a] with values from 0 to 255.`);
  }
  return parsed.join(',');
}

/**
 * QGIS's `r,g,b,a` (with its colour-model suffix from 3.28 on) back to the style body's form:
 * `#RRGGBB` when opaque, `r,g,b,a` otherwise.
 */
export function styleColour(qgis: string): string {
  const parsed = components(qgis);
  if (!parsed) return qgis;
  const [r, g, b, a] = parsed as [number, number, number, number];
  if (a !== 255) return parsed.join(',');
  return '#' + [r, g, b].map((n) => n.toString(16).padStart(2, '0').toUpperCase()).join('');
}
