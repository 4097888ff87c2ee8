import assert from 'node:assert/strict';

import { test } from '../../../test/support/node-test.js';
import { BadRequest } from '../../errors.js';
import { qgisColour, styleColour } from './colour.js';

test('colours are written as QGIS writes them', () => {
  assert.equal(qgisColour('#00BBBB', 'color'), '0,187,187,255');
  assert.equal(qgisColour('#00bbbb', 'color'), '0,187,187,255');
  assert.equal(qgisColour('1,2,3', 'color'), '1,2,3,255');
  assert.equal(qgisColour('1, 2, 3, 4', 'color'), '1,2,3,4');
});

test('bad colours are a BadRequest naming the property', () => {
  for (const bad of ['#0BB', 'red', '1,2', '1,2,3,4,5', '256,0,0', '#00BBBBFF', '']) {
    assert.throws(
      () => qgisColour(bad, 'outline_color'),
      (e: unknown) => e instanceof BadRequest && /outline_color/.test(e.message),
    );
  }
});

test('colours read back as #RRGGBB when opaque, r,g,b,a otherwise', () => {
  assert.equal(styleColour('0,187,187,255'), '#00BBBB');
  assert.equal(styleColour('0,187,187,128'), '0,187,187,128');
});
