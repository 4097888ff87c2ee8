import { BadRequest } from '../../errors.js';

const HEX = /^#([0-9a-fA-F]{2})([0-9a-fA-F]{2})([0-9a-fA-F]{2})$/;
const COMPONENTS = /^\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*(?:,\s*(\d{1,3})\s*)?$/;

function components(value: string): number[] | undefined {
  const hex = HEX.exec(value);
  if (hex) return [...hex.slice(1, 4).map((part) => parseInt(part, 16)), 255];
  const listed = COMPONENTS.exec(value);
  if (!listed) return undefined;
  const numbers = listed.slice(1, 5).map((part) => (part === undefined ? 255 : Number(part)));
  return numbers.every((n) => n <= 255) ? numbers : undefined;
}

/** `#RRGGBB` or `r,g,b[,a]` (0-255) -> `r,g,b,a` as QGIS writes colours; BadRequest naming `key` otherwise. */
export function qgisColour(value: string, key: string): string {
  const parsed = components(value);
  if (!parsed) {
    throw new BadRequest(`"${value}" is not a colour for ${key}: use #RRGGBB or r,g,b[,a] with values from 0 to 255.`);
  }
  return parsed.join(',');
}

/** QGIS's `r,g,b,a` back to the style body's form: `#RRGGBB` when opaque, `r,g,b,a` otherwise. */
export function styleColour(qgis: string): string {
  const parsed = components(qgis);
  if (!parsed) return qgis;
  const [r, g, b, a] = parsed as [number, number, number, number];
  if (a !== 255) return parsed.join(',');
  return '#' + [r, g, b].map((n) => n.toString(16).padStart(2, '0').toUpperCase()).join('');
}
