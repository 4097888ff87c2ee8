import assert from 'node:assert/strict';

import { describe, test } from '../../../test/support/node-test.js';
import { BadRequest } from '../../errors.js';
import { bandReferences, type ExpressionNode } from './ast.js';
import { MAX_NESTING, parseExpression } from './parser.js';

/** The tree, fully parenthesised. */
function show(node: ExpressionNode): string {
  switch (node.kind) {
    case 'number':
      return String(node.value);
    case 'band':
      return `[${node.ref.layer}@${node.ref.band}]`;
    case 'negate':
      return `(-${show(node.operand)})`;
    case 'binary':
      return `(${show(node.left)} ${node.operator} ${show(node.right)})`;
    case 'call':
      return `${node.name}(${node.args.map(show).join(', ')})`;
  }
}

// Each expected form was checked against QGIS 3.22's own parser (QgsRasterCalcNode).
const TREES: Array<[string, string]> = [
  ['1 + 2 * 3', '(1 + (2 * 3))'],
  ['(1 + 2) * 3', '((1 + 2) * 3)'],
  ['2 - 3 - 4', '((2 - 3) - 4)'],
  ['8 / 4 / 2', '((8 / 4) / 2)'],
  ['2^3^2', '((2 ^ 3) ^ 2)'],
  ['-2^2', '((-2) ^ 2)'],
  ['2^-1', '(2 ^ (-1))'],
  ['2 * -3 ^ 2', '(2 * ((-3) ^ 2))'],
  ['a@1*-b@1', '([a@1] * [-b@1])'],
  ['+3', '3'],
  ['--1', '(-(-1))'],
  ['1 AND 2 OR 3', '(1 AND (2 OR 3))'],
  ['1 OR 2 AND 3', '((1 OR 2) AND 3)'],
  ['a@1 != b@1 >= 3', '([a@1] != ([b@1] >= 3))'],
  ['1 <= 2 >= 3', '((1 <= 2) >= 3)'],
  ['1 < 2 > 0', '((1 < 2) > 0)'],
  ['1 + 2 * 3 = 7', '((1 + (2 * 3)) = 7)'],
  ['a@1 > 0 and b@2 < 1', '(([a@1] > 0) AND ([b@2] < 1))'],
  ['min(a@1, 2) + ABS(-"x y@2")', '(min([a@1], 2) + abs((-[x y@2])))'],
  ['ln(3) * log10(4)', '(ln(3) * log10(4))'],
  ['if(a@1 > 1, 2, 3)', 'if(([a@1] > 1), 2, 3)'],
  ['sqrt(sin(cos(tan(asin(acos(atan(1)))))))', 'sqrt(sin(cos(tan(asin(acos(atan(1)))))))'],
  ['1e3 + .5 + 5. + 2.5E-1', '(((1000 + 0.5) + 5) + 0.25)'],
  ['"my dem@12" * 2', '([my dem@12] * 2)'],
  ['"quo\\"ted@1"', '[quo"ted@1]'],
  ['dem.tif@1 + my-layer@2 + ünïcode@1 + a/b:c@1', '((([dem.tif@1] + [my-layer@2]) + [ünïcode@1]) + [a/b:c@1])'],
  ['1-a@1', '[1-a@1]'],
  ['a@1 - b@1', '([a@1] - [b@1])'],
  ['sin@1 + and@2', '([sin@1] + [and@2])'],
];

const ERRORS: Array<[string, number, RegExp]> = [
  ['', 1, /expected a number/],
  ['1 +', 4, /found the end of the expression/],
  ['(1', 3, /expected "\)"/],
  ['1)', 2, /closes no "\("/],
  ['1 2', 3, /expected an operator, found "2"/],
  ['a@1-b@1', 4, /part of the name/],
  ['abs(1, 2)', 6, /abs takes 1 argument/],
  ['max(1)', 6, /argument 2 of max/],
  ['foo(1)', 1, /unknown name "foo"/],
  ['"abc"', 1, /not a band reference/],
  ['"abc@1', 1, /not closed/],
  ['x@0', 1, /band numbers start at 1/],
  ['1 $ 2', 3, /unexpected character "\$"/],
  ['1 ! 2', 3, /unexpected character "!"/],
  ['(((a@1 + ', 10, /expected a number/],
  ['sqrt 4', 6, /expected "\(" after sqrt/],
  ['é@1 + )', 7, /expected a number/],
];

describe('raster calculator parser', () => {
  for (const [expression, expected] of TREES) {
    test(`parses ${expression} as QGIS does`, () => {
      assert.equal(show(parseExpression(expression)), expected);
    });
  }

  for (const [expression, position, message] of ERRORS) {
    test(`refuses ${JSON.stringify(expression)} at character ${position}`, () => {
      assert.throws(
        () => parseExpression(expression),
        (error: Error) =>
          error instanceof BadRequest &&
          error.message.includes(`character ${position}:`) &&
          message.test(error.message),
      );
    });
  }

  test('lists band references in the order they are written, with their positions', () => {
    const refs = bandReferences(parseExpression('b@2 + "a@1" * b@2'));
    assert.deepEqual(refs, [
      { ref: { layer: 'b', band: 2 }, position: 1 },
      { ref: { layer: 'a', band: 1 }, position: 7 },
      { ref: { layer: 'b', band: 2 }, position: 15 },
    ]);
  });

  test(`takes ${MAX_NESTING} levels of parentheses, functions and signs, and refuses deeper ones with a 400`, () => {
    const parenthesised = (depth: number): string => `${'('.repeat(depth)}dem@1${')'.repeat(depth)}`;
    const called = (depth: number): string => `${'abs('.repeat(depth)}dem@1${')'.repeat(depth)}`;
    const signed = (depth: number): string => `${'-'.repeat(depth)}1`;
    for (const nest of [parenthesised, called, signed]) {
      assert.doesNotThrow(() => parseExpression(nest(MAX_NESTING)), nest.name);
      for (const depth of [MAX_NESTING + 1, 1000, 4000]) {
        assert.throws(
          () => parseExpression(nest(depth)),
          (error) => error instanceof BadRequest && /deeper than 100 levels/.test(error.message),
          `${nest.name} ${depth}`,
        );
      }
    }
  });
});
