import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { displayWidth, formatTable } from './table.js';

test('pads every column to its widest cell', () => {
  const table = formatTable(
    ['INSTANCE ID', 'IP', 'STATUS'],
    [
      ['1a2b3c4d', '127.0.0.1', 'Binded 3 seconds ago'],
      ['ffff0000', '10.0.0.12', 'Binded 120 seconds ago'],
    ],
  );
  assert.equal(
    table,
    [
      'INSTANCE ID   IP          STATUS',
      '1a2b3c4d      127.0.0.1   Binded 3 seconds ago',
      'ffff0000      10.0.0.12   Binded 120 seconds ago',
      '',
    ].join('\n'),
  );
});

test('prints only the headers when there are no rows, and tolerates short rows', () => {
  assert.equal(formatTable(['A', 'B'], []), 'A   B\n');
  assert.equal(formatTable(['A', 'B'], [['xyz']]), 'A     B\nxyz\n');
});

test('counts display columns: wide characters and emoji take 2, combining marks none', () => {
  assert.equal(displayWidth('abc'), 3);
  assert.equal(displayWidth('東京'), 4);
  assert.equal(displayWidth('서울'), 4);
  assert.equal(displayWidth('ＡＢ'), 4);
  assert.equal(displayWidth('🗺️'), 2);
  assert.equal(displayWidth('👩‍💻'), 2);
  assert.equal(displayWidth('🇫🇷'), 2);
  assert.equal(displayWidth('e\u0301te\u0301'), 3);
  assert.equal(displayWidth('\u0301'), 0);
  assert.equal(displayWidth('\u200b'), 0);
});

test('pads cells by display width, so columns line up on a terminal', () => {
  const table = formatTable(
    ['PROJECT', 'STATUS'],
    [
      ['東京.qgs', 'ok'],
      ['cafe\u0301 🗺️.qgs', 'broken'],
      ['roads.qgs', 'ok'],
    ],
  );
  assert.equal(
    table,
    ['PROJECT       STATUS', '東京.qgs      ok', 'cafe\u0301 🗺️.qgs   broken', 'roads.qgs     ok', ''].join('\n'),
  );
});
