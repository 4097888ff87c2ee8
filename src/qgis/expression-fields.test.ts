import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { expressionFields } from './expression-fields.js';

describe('expressionFields', () => {
  it('finds quoted and bare column references', () => {
    assert.deepEqual([...expressionFields('"kind" = \'road\' AND lanes > 2')], ['kind', 'lanes']);
    assert.deepEqual([...expressionFields('"a ""b"""')], ['a "b"']);
  });

  it('leaves out strings, numbers, functions, keywords, variables and $values', () => {
    const found = expressionFields(
      "upper(name) || ' x ' || @layer_name || $area IS NOT NULL AND 1e5 > 2.5 CASE WHEN TRUE THEN 'name' END",
    );
    assert.deepEqual([...found], ['name']);
  });
});
