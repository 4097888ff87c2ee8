import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { instantDimension, readTimeDimension, utcInstant } from './temporal.js';
import { type XmlElement } from './xml/node.js';
import { parseXml } from './xml/parse.js';

test('utcInstant takes ISO 8601 date-times to the second, in UTC, and nothing else', () => {
  const accepted: Array<[string, string]> = [
    ['2024-05-01T00:00:00', '2024-05-01T00:00:00Z'],
    ['2024-05-01T00:00:00Z', '2024-05-01T00:00:00Z'],
    ['2024-05-01T00:30:00+02:00', '2024-04-30T22:30:00Z'],
    ['2024-12-31T23:00:00-05:30', '2025-01-01T04:30:00Z'],
    ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00Z'],
  ];
  for (const [text, instant] of accepted) assert.equal(utcInstant(text), instant, text);
  const refused = [
    '2024-05-01',
    '2024-05-01T00:00',
    '2024-05-01 00:00:00',
    '2024-05-01T00:00:00.5Z',
    '2024-05-01T00:00:00+2:00',
    '2023-02-29T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-05-01T24:00:00Z',
    '2024-05-01T00:60:00Z',
    '2024-05-01T00:00:60Z',
    '2024-05-01T00:00:00+24:00',
    '9999-12-31T23:00:00-02:00',
    ' 2024-05-01T00:00:00Z',
    'yesterday',
    '',
  ];
  for (const text of refused) assert.equal(utcInstant(text), undefined, text);
});

test('only an active fixed range of one instant is a time dimension', () => {
  const temporal = (attributes: string, start: string, end: string): XmlElement =>
    parseXml(
      `<maplayer><temporal ${attributes}><fixedRange><start>${start}</start><end>${end}</end></fixedRange></temporal></maplayer>`,
    ).root;
  const instant = '2024-05-01T00:00:00Z';
  assert.deepEqual(readTimeDimension(temporal('enabled="1" mode="0"', instant, instant)), instantDimension(instant));
  assert.equal(readTimeDimension(temporal('enabled="0" mode="0"', instant, instant)), undefined, 'inactive');
  assert.equal(
    readTimeDimension(temporal('enabled="1" mode="1"', instant, instant)),
    undefined,
    'times from the provider',
  );
  assert.equal(
    readTimeDimension(temporal('enabled="1" mode="0"', instant, '2024-06-01T00:00:00Z')),
    undefined,
    'a range',
  );
  assert.equal(readTimeDimension(temporal('enabled="1" mode="0"', '', '')), undefined, 'no times');
  assert.equal(readTimeDimension(parseXml('<maplayer/>').root), undefined, 'no temporal properties');
});
