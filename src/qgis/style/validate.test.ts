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
      fill({}, { symbology: { type: 'rule_based', symbol: 'fill' } }),
      /symbology\.type must be one of single_symbol, categorized, graduated, not "rule_based"/,
    );
    rejects(fill({}, { symbology: { type: 'categorized', symbol: 'fill' } }), /symbology\.field is required/);
    rejects(fill({}, { rendering: { opacity: 2 } }), /rendering\.opacity/);
    rejects(fill({}, { rendering: { blur: 1 } }), /rendering\.blur is not a known member/);
    rejects({ type: 'vector', symbology: { type: 'single_symbol', symbol: 'fill' } }, /name is required/);
    rejects(
      { type: 'raster', name: 'p', symbology: { type: 'paletted', properties: {} } },
      /symbology\.type must be one of singlebandgray, multibandcolor, singlebandpseudocolor, not "paletted"/,
    );
    rejects(
      { type: 'raster', name: 'p', symbology: { type: 'singlebandpseudocolor', properties: {} } },
      /symbology\.properties\.band is required/,
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

  function classed(symbology: Record<string, unknown>) {
    return { type: 'vector', name: 'k', symbology: { symbol: 'marker', properties: { size: 4 }, ...symbology } };
  }
  const categorized = (categories: unknown[], other?: unknown) =>
    classed({ type: 'categorized', field: 'kind', categories, ...(other ? { other } : {}) });
  const graduated = (ranges: unknown[]) => classed({ type: 'graduated', field: 'pop', ranges });
  function pseudocolor(properties: Record<string, unknown>) {
    const stops = [
      { value: 0, colour: '#000000' },
      { value: 10, colour: '#FFFFFF' },
    ];
    return {
      type: 'raster',
      name: 'p',
      symbology: { type: 'singlebandpseudocolor', properties: { band: 1, min: 0, max: 10, stops, ...properties } },
    };
  }

  test('accepts categorized, graduated and pseudocolor styles', () => {
    const kinds = categorized(
      [
        { value: 'a', colour: '#FF0000' },
        { value: 3, label: 'three', colour: '0,0,255' },
      ],
      {
        colour: '#CCCCCC',
      },
    );
    assert.deepEqual(parseStyle(kinds, catalogue), kinds);
    parseStyle(graduated([{ lower: 0, upper: 10, colour: '#FF0000' }]), catalogue);
    parseStyle(pseudocolor({ interpolation: 'DISCRETE' }), catalogue);
  });

  test('refuses bad classes and colour stops, naming them', () => {
    rejects(categorized([]), /symbology\.categories/);
    rejects(categorized([{ value: 'a', colour: 'red' }]), /"red" is not a colour for symbology\.categories\.0\.colour/);
    rejects(categorized([{ value: '', colour: '#FF0000' }]), /symbology\.categories\.0\.value/);
    rejects(
      categorized([
        { value: 1, colour: '#FF0000' },
        { value: '1', colour: '#00FF00' },
      ]),
      /the category of value "1" is given twice/,
    );
    rejects(categorized([{ value: 'a', colour: '#FF0000' }], { colour: '#12' }), /symbology\.other\.colour/);
    rejects(
      classed({
        type: 'categorized',
        field: 'kind',
        categories: [{ value: 'a', colour: '#FF0000' }],
        properties: { color: '#FF0000' },
      }),
      /color is each class's own colour in a categorized style/,
    );
    rejects(
      graduated([{ lower: 10, upper: 0, colour: '#FF0000' }]),
      /ranges\.0 has its lower bound 10 above its upper bound 0/,
    );
    rejects(graduated([{ lower: 0, colour: '#FF0000' }]), /symbology\.ranges\.0\.upper is required/);
    rejects(classed({ type: 'graduated', field: '', ranges: [] }), /symbology\.field/);
    rejects(pseudocolor({ min: 5, max: 1 }), /min \(5\) is above symbology\.properties\.max \(1\)/);
    rejects(
      pseudocolor({
        stops: [
          { value: 5, colour: '#000000' },
          { value: 5, colour: '#FFFFFF' },
        ],
      }),
      /stop 1 \(5\) is not above stop 0 \(5\)/,
    );
    rejects(pseudocolor({ interpolation: 'SMOOTH' }), /interpolation must be one of INTERPOLATED, DISCRETE, EXACT/);
    rejects(pseudocolor({ stops: [{ value: 0, colour: '#00000' }] }), /stops\.0\.colour/);
  });
});
