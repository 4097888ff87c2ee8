/** Runs the `steward` command in this process, as a terminal would but capturing what it prints. */
import { run } from '../../src/cli/run.js';

export interface CliOutcome {
  code: number;
  out: string;
  err: string;
}

/** `input` is what stdin gives (`steward login` reads its token there). */
export async function steward(argv: string[], env: NodeJS.ProcessEnv, input = ''): Promise<CliOutcome> {
  const outcome = { code: -1, out: '', err: '' };
  outcome.code = await run(argv, {
    out: (text) => void (outcome.out += text),
    err: (text) => void (outcome.err += text),
    env,
    isTTY: false,
    signal: new AbortController().signal,
    readSecret: async () => input.split('\n')[0] ?? '',
  });
  return outcome;
}
