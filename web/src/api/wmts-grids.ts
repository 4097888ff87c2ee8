/**
 * The WMTS tile grids as the console edits them: a row of texts per grid, checked field by field as
 * Desktop's WMTS grid table lets them be edited, and the `wmts.grids` of the PATCH they make.
 */
import type { ServicesChange, Settings } from './service-settings';

export type Grid = NonNullable<Settings['wmts']['grids']>[number];
export type GridRequest = NonNullable<NonNullable<ServicesChange['wmts']>['grids']>[number];

/** A grid as typed; `top`, `left` and `scale` are empty for a fixed grid not yet saved. */
export interface GridRow {
  crs: string;
  top: string;
  left: string;
  scale: string;
  last: string;
}

export type GridField = 'top' | 'left' | 'scale' | 'last';

/** What is wrong with each field of a row, in a sentence. */
export type GridProblems = Partial<Record<GridField, string>>;

/**
 * The grids whose corner and scale QGIS Server fixes (qgswmtsutils.cpp): Desktop lets only their last
 * level be edited, and the API fills the rest (FIXED_WMTS_GRIDS of src/qgis/project-services.ts).
 */
export function isFixedGrid(crs: string): boolean {
  return crs === 'EPSG:3857' || crs === 'EPSG:4326';
}

/** The highest last level the API takes. */
export const LAST_LEVEL_MAX = 30;

/** Desktop's last level for a grid it offers. */
const DEFAULT_LAST_LEVEL = '18';

/** The rows of the grids read; null when the project defines none (QGIS Server's own). */
export function gridRows(grids: readonly Grid[] | null): GridRow[] | null {
  return grids === null
    ? null
    : grids.map((grid) => ({
        crs: grid.crs,
        top: String(grid.top),
        left: String(grid.left),
        scale: String(grid.scale_denominator),
        last: String(grid.last_level),
      }));
}

/** `EPSG:2154` from "EPSG:2154", "epsg:2154" or "2154", as the API normalises it; undefined otherwise. */
export function epsgCode(text: string): string | undefined {
  const match = /^(?:epsg:)?(\d+)$/i.exec(text.trim());
  return match ? `EPSG:${match[1]}` : undefined;
}

/** A new row for `text`, or what is wrong with it. */
export function newGridRow(text: string, rows: readonly GridRow[]): GridRow | string {
  const crs = epsgCode(text);
  if (crs === undefined) return `A grid’s CRS is an EPSG code such as EPSG:2154, not “${text}”.`;
  if (rows.some((row) => row.crs === crs)) return `${crs} has a grid already.`;
  return { crs, top: '', left: '', scale: '', last: DEFAULT_LAST_LEVEL };
}

function number(text: string): number | undefined {
  const value = Number(text);
  return text.trim() === '' || !Number.isFinite(value) ? undefined : value;
}

/** The problems of a row; none for the corner and scale of a fixed grid, which are not sent. */
export function gridProblems(row: GridRow): GridProblems {
  const problems: GridProblems = {};
  const last = Number(row.last);
  if (row.last.trim() === '' || !Number.isInteger(last) || last < 0 || last > LAST_LEVEL_MAX)
    problems.last = `The last level is a whole number from 0 to ${LAST_LEVEL_MAX}, not “${row.last}”.`;
  if (isFixedGrid(row.crs)) return problems;
  if (number(row.top) === undefined) problems.top = `The top is a number in ${row.crs}’s units, not “${row.top}”.`;
  if (number(row.left) === undefined) problems.left = `The left is a number in ${row.crs}’s units, not “${row.left}”.`;
  const scale = number(row.scale);
  if (scale === undefined || scale <= 0)
    problems.scale = `The scale denominator of level 0 is a number above 0, not “${row.scale}”.`;
  return problems;
}

/** The grids to send: a fixed grid with its CRS and last level only, before the API has filled it; null for QGIS Server's own. */
export function gridsOf(rows: readonly GridRow[] | null): GridRequest[] | null {
  if (rows === null) return null;
  if (rows.some((row) => Object.keys(gridProblems(row)).length > 0))
    throw new Error('A WMTS tile grid has a field to correct: its message is next to it.');
  return rows.map((row) => {
    const [top, left, scale_denominator] = [number(row.top), number(row.left), number(row.scale)];
    const last_level = Number(row.last);
    if (top === undefined || left === undefined || scale_denominator === undefined) return { crs: row.crs, last_level };
    return { crs: row.crs, top, left, scale_denominator, last_level };
  });
}

/** Whether `requested` are the grids read, field by field (QGIS Server's own, null, only the same as null). */
export function sameGrids(requested: readonly GridRequest[] | null, read: readonly Grid[] | null): boolean {
  const fields = ['crs', 'top', 'left', 'scale_denominator', 'last_level'] as const;
  if (requested === null || read === null) return requested === read;
  return (
    requested.length === read.length &&
    requested.every((grid, index) => fields.every((field) => grid[field] === read[index]?.[field]))
  );
}
