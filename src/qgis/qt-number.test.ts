import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { qtNumber, readQtNumber } from './qt-number.js';

test("numbers are written as Qt's %g writes them, with six or seventeen significant digits", () => {
  assert.equal(qtNumber(0.0014739199541509151), '0.00147392');
  assert.equal(qtNumber(0.0014739199541509151, 17), '0.0014739199541509151');
  assert.equal(qtNumber(1 / 3, 17), '0.33333333333333331');
  assert.equal(qtNumber(100), '100');
  assert.equal(qtNumber(10.123456789), '10.1235');
  assert.equal(qtNumber(1e8), '1e+08');
  assert.equal(qtNumber(123456789), '1.23457e+08');
  assert.equal(qtNumber(0.00001234), '1.234e-05');
  assert.equal(qtNumber(-2.5), '-2.5');
  assert.equal(qtNumber(0), '0');
  assert.equal(qtNumber(Infinity), 'inf');
  assert.equal(qtNumber(-Infinity), '-inf');
  assert.equal(qtNumber(NaN), 'nan');
});

test('numbers are read as QGIS wrote them, infinities included', () => {
  assert.equal(readQtNumber('inf'), Infinity);
  assert.equal(readQtNumber('-inf'), -Infinity);
  assert.equal(readQtNumber(' 1e+08 '), 1e8);
  assert.ok(Number.isNaN(readQtNumber('nan')));
  assert.ok(Number.isNaN(readQtNumber('')));
});
