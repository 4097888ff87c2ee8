import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { toYaml } from './yaml.js';

test('writes block mappings, flow sequences of scalars and one line per comment', () => {
  const text = toYaml({ layers: [{ name: 'a', sources: ['a_cache'] }], services: { demo: {} } }, [
    'first',
    'second\nhalf',
  ]);
  assert.equal(
    text,
    [
      '# first',
      '# second half',
      'layers:',
      '  - name: "a"',
      '    sources: ["a_cache"]',
      'services:',
      '  demo: {}',
      '',
    ].join('\n'),
  );
});

test('refuses numbers YAML cannot hold', () => {
  assert.throws(() => toYaml({ bad: Number.NaN }), /NaN cannot be written/);
  assert.throws(() => toYaml({ bad: [Infinity] }), /Infinity cannot be written/);
});
