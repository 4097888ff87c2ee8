/** A secret read from stdin: typed on a terminal without being shown, or the first line piped in. */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { type Readable, Writable } from 'node:stream';

import { CliError } from './api.js';

/** Where a terminal's echo of what is typed goes: nowhere. */
function silence(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}

/** The first line of `input`, with `prompt` on `output` and nothing echoed when it is a terminal; '' at its end. */
export async function readSecret(
  prompt: string,
  input: Readable & { isTTY?: boolean } = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Promise<string> {
  const terminal = input.isTTY === true;
  if (terminal) output.write(prompt);
  const lines = createInterface({ input, output: silence(), terminal });
  try {
    const interrupted = once(lines, 'SIGINT').then(() => {
      throw new CliError('interrupted');
    });
    const ended = once(lines, 'close').then(() => ['']);
    const [line] = (await Promise.race([once(lines, 'line'), ended, interrupted])) as [string];
    return line;
  } finally {
    lines.close();
    if (terminal) output.write('\n');
  }
}
