/** MapProxy's Python (PyYAML) as the oracle of the YAML Steward writes. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

import { MAPPROXY_PYTHON } from '../src/tile-cache/validate.js';
import { toYaml, type YamlMapping } from '../src/tile-cache/yaml.js';
import { test } from './support/node-test.js';

/** The document as PyYAML, the reader MapProxy uses, loads it. */
function pyyaml(text: string): unknown {
  const script = 'import json, sys, yaml\nprint(json.dumps(yaml.safe_load(sys.stdin.read())))';
  return JSON.parse(execFileSync(MAPPROXY_PYTHON, ['-c', script], { input: text, encoding: 'utf8' }));
}

test('PyYAML reads back exactly what was written, strings that look like other things included', () => {
  const document: YamlMapping = {
    plain: 'text',
    lookalikes: [
      'yes',
      'no',
      'null',
      '~',
      '1e3',
      '0x10',
      '2024-01-01',
      '',
      ' padded ',
      '- dash',
      '# hash',
      'a: b',
      '[x]',
      '{y}',
      '*ref',
      '&anchor',
      '!tag',
      '%dir',
      '@',
      '`',
    ],
    escapes: [
      'quote " and \\ backslash',
      'tab\tline\nbreak',
      'nul \u0000 bell \u0007',
      'c1 \u0085 \u009b',
      'ls \u2028 ps \u2029',
      'bom \ufeff',
    ],
    unicode: ['wéird', '漢字', 'emoji 🗺️'],
    numbers: [0, -1.5, 1e-7, -2.5e-12, 1e21, 123456789, 20037508.342789244],
    flags: [true, false, null],
    'key with: colon': { '"quoted" key': 1, '': 'empty key' },
    empty: { list: [], map: {} },
    nested: [{ name: 'a', sources: ['x', 'y'], deeper: [{ k: 1 }, [1, [2, 3]]] }, 'scalar', [], {}],
  };
  assert.deepEqual(pyyaml(toYaml(document, ['a comment', 'with a\nline break'])), document);
});
