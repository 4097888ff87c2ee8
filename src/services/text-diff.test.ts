import assert from 'node:assert/strict';

import fc from 'fast-check';

import { describe, it } from '../../test/support/node-test.js';
import { unifiedDiff } from './text-diff.js';

/** The text `before` becomes when the hunks of a unified difference are applied to it. */
function patch(before: string, diff: string): string {
  const lines = before.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const out: string[] = [];
  let at = 0;
  const body = diff.split('\n').slice(2);
  for (let index = 0; index < body.length; index++) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$/.exec(body[index] ?? '');
    if (!header) continue;
    const start = Number(header[2]) === 0 ? Number(header[1]) : Number(header[1]) - 1;
    while (at < start) out.push(lines[at++] as string);
    for (index++; index < body.length && !(body[index] ?? '').startsWith('@@') && body[index] !== ''; index++) {
      const line = body[index] as string;
      if (line.startsWith('+')) out.push(line.slice(1));
      else {
        assert.equal(lines[at], line.slice(1), 'a context or removed line is the text of before');
        if (line.startsWith(' ')) out.push(line.slice(1));
        at++;
      }
    }
    index--;
  }
  while (at < lines.length) out.push(lines[at++] as string);
  return out.map((line) => `${line}\n`).join('');
}

const text = fc
  .array(fc.constantFrom('a', 'b', 'c', 'd', '<layer/>', ''), { maxLength: 40 })
  .map((lines) => lines.map((line) => `${line}\n`).join(''));

describe('the unified difference of two texts', () => {
  it('turns the one into the other when applied', () => {
    fc.assert(
      fc.property(text, text, (before, after) => {
        const diff = unifiedDiff(before, after, { from: 'a', to: 'b' });
        assert.equal(diff === '', before === after);
        if (diff !== '') assert.equal(patch(before, diff), after);
      }),
      { numRuns: 2000 },
    );
  });

  it('tells a changed line with three lines of context', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9'].map((line) => `${line}\n`).join('');
    const after = before.replace('5\n', 'five\n');
    assert.equal(
      unifiedDiff(before, after, { from: 'version 1', to: 'version 2' }),
      '--- version 1\n+++ version 2\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n',
    );
  });
});
