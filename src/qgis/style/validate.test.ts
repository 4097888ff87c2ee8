import assert from 'node:assert/strict';

import { before, describe, test } from '../../../test/support/node-test.js';
import { BadRequest } from '../../errors.js';
import { loadSymbologyCatalogue, type SymbologyCatalogue } from '../symbology/catalogue.js';
import { parseStyle } from './validate.js';

function fill(properties: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    type: 'vector',
    name: 'f',
    rendering: {},
    symbology: { type: 'single_symbol', symbol: 'fill', properties },
    ...extra,
  };
}

function gray(contrast: Record<string, unknown>) {
  return {
    type: 'raster',
    name: 'g',
    symbology: { type: 'singlebandgray', properties: { gray: { band: 1 }, contrast_enhancement: contrast } },
  };
}

function rgb(red: Record<string, unknown>, limits: string) {
  const band = (n: number) => (limits === 'UserDefined' ? { band: n, min: 0, max: 255 } : { band: n });
  return {
    type: 'raster',
    name: 'c',
    rendering: { brightness: 3 },
    symbology: {
      type: 'multibandcolor',
      properties: {
        red,
        green: band(2),
        blue: band(3),
        contrast_enhancement: { algorithm: 'NoEnhancement', limits_min_max: limits },
      },
    },
  };
}

describe('parseStyle', () => {
  let catalogue: SymbologyCatalogue;
  before(async () => {
    catalogue = await loadSymbologyCatalogue('3.22.16');
  });

  const rejects = (body: unknown, pattern: RegExp) =>
    assert.throws(
      () => parseStyle(body, catalogue),
      (error: unknown) => error instanceof BadRequest && pattern.test(error.message),
    );

  test('accepts the documented styles', () => {
    const vector = fill({ color: '#00BBBB', style: 'solid', outline_width: 0.5, outline_color: '#FFFFFF' });
    assert.deepEqual(parseStyle(vector, catalogue), vector);
    const minimal = { type: 'vector', name: 'm', symbology: { type: 'single_symbol', symbol: 'marker' } };
    assert.deepEqual(parseStyle(minimal, catalogue), minimal);
    parseStyle(gray({ algorithm: 'StretchToMinimumMaximum', limits_min_max: 'MinMax' }), catalogue);
    parseStyle(gray({ algorithm: 'NoEnhancement', limits_min_max: 'UserDefined', min: 1, max: 2 }), catalogue);
    parseStyle(rgb({ band: 1, min: 0, max: 255 }, 'UserDefined'), catalogue);
    parseStyle(rgb({ band: 1 }, 'MinMax'), catalogue);
  });

  test('names what is wrong with the shape', () => {
    rejects({ ...fill({}), type: 'polygon' }, /type must be one of vector, raster, not "polygon"/);
    rejects('style', /type must be one of vector, raster/);
    rejects(
      fill({}, { symbology: { type: 'single_symbol', symbol: 'polygon' } }),
      /symbology\.symbol must be one of marker, line, fill, not "polygon"/,
    );
    rejects(
      fill({}, { symbology: { type: 'categorized', symbol: 'fill' } }),
      /symbology\.type must be one of single_symbol|symbology\.type: expected/,
    );
    rejects(fill({}, { rendering: { opacity: 2 } }), /rendering\.opacity/);
    rejects(fill({}, { rendering: { blur: 1 } }), /rendering\.blur is not a known member/);
    rejects({ type: 'vector', symbology: { type: 'single_symbol', symbol: 'fill' } }, /name is required/);
    rejects(
      { type: 'raster', name: 'p', symbology: { type: 'singlebandpseudocolor', properties: {} } },
      /symbology\.type must be one of singlebandgray, multibandcolor, not "singlebandpseudocolor"/,
    );
    rejects(rgb({ band: 0 }, 'MinMax'), /symbology\.properties\.red\.band/);
    rejects(
      gray({ algorithm: 'Histogram', limits_min_max: 'MinMax' }),
      /algorithm must be one of StretchToMinimumMaximum, NoEnhancement/,
    );
  });

  test('refuses an unknown property, a bad colour and a value outside an enumeration, naming them', () => {
    rejects(fill({ colour: '#FFFFFF' }), /"colour" is not a property of a fill symbol/);
    rejects(fill({ color: '#GG0000' }), /"#GG0000" is not a colour for color/);
    rejects(fill({ outline_color: '256,0,0' }), /for outline_color/);
    rejects(
      fill({ outline_style: 'wavy' }),
      /outline_style must be one of no, solid, dash, dot, dash dot, dash dot dot, not "wavy"/,
    );
    rejects(
      fill({ outline_width: true }),
      /symbology\.properties\.outline_width must be a string or a number, not true/,
    );
  });

  test('user-defined limits need min and max; MinMax limits refuse them', () => {
    rejects(
      gray({ algorithm: 'NoEnhancement', limits_min_max: 'UserDefined', min: 1 }),
      /contrast_enhancement\.max is required when limits_min_max is UserDefined/,
    );
    rejects(
      gray({ algorithm: 'NoEnhancement', limits_min_max: 'MinMax', min: 1 }),
      /contrast_enhancement\.min is only used when limits_min_max is UserDefined/,
    );
    rejects(rgb({ band: 1 }, 'UserDefined'), /red\.min is required/);
    rejects(rgb({ band: 1, min: 0, max: 1 }, 'MinMax'), /red\.min is only used/);
    rejects(
      { type: 'raster', name: 'g', symbology: { type: 'singlebandgray', properties: { gray: { band: 1, min: 0 } } } },
      /gray\.min is not a known member/,
    );
  });
});
