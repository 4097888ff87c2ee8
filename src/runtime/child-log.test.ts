import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';

import { describe, it } from '../../test/support/node-test.js';
import { ChildLog } from './child-log.js';

/** Runs `script` in a Node child and returns its log once the child has exited and its streams closed. */
async function logOf(script: string, limit: number, heard: string[] = []): Promise<ChildLog> {
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = new ChildLog(child, (line) => heard.push(line), limit);
  await once(child, 'close');
  return log;
}

describe('ChildLog', () => {
  it('keeps whole lines from both streams, however the child split its writes', async () => {
    const heard: string[] = [];
    const log = await logOf(
      `process.stdout.write('first ha'); setTimeout(() => { process.stdout.write('lf\\n\\nsecond\\n'); console.error('on stderr'); }, 50);`,
      100,
      heard,
    );
    assert.deepEqual([...log.lines].sort(), ['first half', 'on stderr', 'second']);
    assert.deepEqual(heard, [...log.lines], 'the listener hears each kept line once, in order');
  });

  it('drops the oldest lines once past its limit, keeping the newest', async () => {
    const log = await logOf(`for (let i = 1; i <= 1000; i++) console.log('line ' + i);`, 100);
    assert.ok(log.lines.length <= 100 && log.lines.length >= 50, `kept ${log.lines.length} lines`);
    assert.equal(log.lines.at(-1), 'line 1000');
    const first = Number(log.lines[0]?.split(' ')[1]);
    assert.deepEqual(
      log.lines,
      Array.from({ length: 1000 - first + 1 }, (_, index) => `line ${first + index}`),
    );
  });
});
