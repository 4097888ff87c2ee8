import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { compareQgisVersions, reportedQgisVersion } from './version.js';

test('an instance-reported version is kept in ASCII when it is one of a supported QGIS Server', () => {
  assert.equal(reportedQgisVersion('3.22.16'), '3.22.16');
  assert.equal(reportedQgisVersion('3.22.16-Białowieża'), '3.22.16', 'as plugins before 0.2 report it');
  assert.equal(reportedQgisVersion('4.0.1-Next'), '4.0.1');
  for (const refused of [
    undefined,
    '',
    '0.1',
    '0.1.0',
    '3.16.9',
    '3.40',
    'latest',
    '3.40.6\r\nSet-Cookie: x',
    '3.1234.0',
  ])
    assert.equal(reportedQgisVersion(refused), undefined, String(refused));
});

test('versions order by their numbers', () => {
  assert.deepEqual(['3.44.1', '3.40.6', '3.44', '3.22.16'].sort(compareQgisVersions), [
    '3.22.16',
    '3.40.6',
    '3.44',
    '3.44.1',
  ]);
});
