import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { encodeLine, LineDecoder } from './lines.js';

function collect(maxBytes?: number) {
  const lines: string[] = [];
  let overflows = 0;
  const decoder = new LineDecoder(
    {
      line: (text) => lines.push(text),
      overflow: () => {
        overflows += 1;
      },
    },
    maxBytes,
  );
  return { decoder, lines, overflows: () => overflows };
}

test('splits lines across and within chunks', () => {
  const { decoder, lines } = collect();
  decoder.push(Buffer.from('{"a":1}\n{"b"'));
  decoder.push(Buffer.from(':2}\n\n{"c":3}'));
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '']);
  decoder.push(Buffer.from('\n'));
  assert.deepEqual(lines.at(-1), '{"c":3}');
});

test('decodes a multi-byte character split between chunks', () => {
  const { decoder, lines } = collect();
  const bytes = Buffer.from('"Białowieża"\n', 'utf8');
  const cut = bytes.indexOf(0xc5) + 1;
  decoder.push(bytes.subarray(0, cut));
  decoder.push(bytes.subarray(cut));
  assert.deepEqual(lines, ['"Białowieża"']);
});

test('drops an oversized line and resumes after its newline', () => {
  const { decoder, lines, overflows } = collect(8);
  decoder.push(Buffer.from('12345'));
  decoder.push(Buffer.from('67890'));
  assert.equal(overflows(), 1);
  decoder.push(Buffer.from('more garbage without end'));
  assert.equal(overflows(), 1);
  decoder.push(Buffer.from('x\nok\n'));
  assert.deepEqual(lines, ['ok']);
});

test('accepts a line of exactly the limit', () => {
  const { decoder, lines, overflows } = collect(4);
  decoder.push(Buffer.from('abcd\n'));
  assert.deepEqual(lines, ['abcd']);
  assert.equal(overflows(), 0);
});

test('encodes one JSON message per newline-terminated line', () => {
  assert.equal(encodeLine({ id: 7, method: 'stats' }).toString(), '{"id":7,"method":"stats"}\n');
});
