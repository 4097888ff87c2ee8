import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { formatTable } from './table.js';

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
