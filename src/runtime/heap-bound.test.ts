import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { after, describe, it } from '../../test/support/node-test.js';
import { until } from '../../test/support/wait.js';
import { heapBounded } from './heap-bound.js';
import { processAlive } from './process-alive.js';

const MIB = 1024 * 1024;
const folder = mkdtempSync(join(tmpdir(), 'steward-heap-bound-'));
after(() => rmSync(folder, { recursive: true, force: true }));

/**
 * An entry point that bounds itself as its settings ask (100 MiB unless told), reports its heap
 * limit and process, then waits or exits.
 */
const SCRIPT = join(folder, 'entry.mts');
writeFileSync(
  SCRIPT,
  `import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { heapBoundMb } from ${JSON.stringify(join(import.meta.dirname, '..', 'config.ts'))};
import { runBounded } from ${JSON.stringify(join(import.meta.dirname, 'heap-bound.ts'))};
const exitCode = await runBounded(heapBoundMb(process.env), process.env);
if (exitCode !== undefined) process.exit(exitCode);
const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size;
console.log(JSON.stringify({ limit: getHeapStatistics().heap_size_limit, young, pid: process.pid }));
if (process.argv[2] === 'exit') process.exit(7);
setInterval(() => undefined, 1000);
`,
);

function start(argument: string, env: NodeJS.ProcessEnv = {}): ReturnType<typeof spawn> {
  return spawn(process.execPath, ['--import', 'tsx', SCRIPT, argument], {
    env: { ...process.env, NODE_OPTIONS: '', STEWARD_HEAP_MB: '100', STEWARD_PROJECT_CACHE_MB: '50', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

interface Report {
  limit: number;
  /** The young generation's semi-space as the script starts. */
  young: number;
  pid: number;
}

async function report(child: ReturnType<typeof spawn>): Promise<Report> {
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return JSON.parse(line) as Report;
}

describe('heap bound', () => {
  it('finds a bound given in the arguments or NODE_OPTIONS', () => {
    assert.equal(heapBounded(['--max-old-space-size=300']), true);
    assert.equal(heapBounded(['--import', 'tsx'], '--max_old_space_size=300 --trace-gc'), true);
    assert.equal(heapBounded(['--import', 'tsx'], '--max-semi-space-size=8'), false);
    assert.equal(heapBounded([]), false);
  });

  it('runs the script again with the bound, and exits with its code', async () => {
    const launcher = start('exit');
    const { limit, young, pid } = await report(launcher);
    const [code] = (await once(launcher, 'exit')) as [number];
    assert.notEqual(pid, launcher.pid);
    // The old generation's 100 MiB and the young generation's semi-spaces.
    assert.ok(limit > 100 * MIB && limit < 200 * MIB, `heap limit ${limit / MIB} MiB`);
    // Node would start them at 1 MiB.
    assert.equal(young, 16 * MIB);
    assert.equal(code, 7);
  });

  it('keeps a bound Node already has, in one process', async () => {
    const child = start('exit', { NODE_OPTIONS: '--max-old-space-size=150' });
    const { limit, pid } = await report(child);
    await once(child, 'exit');
    assert.equal(pid, child.pid);
    assert.ok(limit > 150 * MIB && limit < 250 * MIB, `heap limit ${limit / MIB} MiB`);
  });

  it("bounds the heap by default (the cache's 128 MiB and 256), and keeps Node's own with 0", async () => {
    const limit = async (env: NodeJS.ProcessEnv): Promise<{ limit: number; inOne: boolean }> => {
      const child = start('exit', env);
      const reported = await report(child);
      await once(child, 'exit');
      return { limit: reported.limit / MIB, inOne: reported.pid === child.pid };
    };
    const byDefault = await limit({ STEWARD_HEAP_MB: '', STEWARD_PROJECT_CACHE_MB: '' });
    assert.ok(byDefault.limit > 384 && byDefault.limit < 500, `heap limit ${byDefault.limit} MiB`);
    assert.equal(byDefault.inOne, false);
    const nodes = await limit({ STEWARD_HEAP_MB: '0' });
    assert.ok(nodes.limit > 1024, `heap limit ${nodes.limit} MiB`);
    assert.equal(nodes.inOne, true);
  });

  it('passes SIGTERM on, and ends the child when the launcher is killed', async () => {
    const terminated = start('wait');
    const first = await report(terminated);
    terminated.kill('SIGTERM');
    const [, signalCode] = (await once(terminated, 'exit')) as [number | null, string | null];
    assert.equal(signalCode, null, 'the launcher exits with a code, not by the signal');
    assert.equal(terminated.exitCode, 128 + 15);
    assert.equal(processAlive(first.pid), false);

    const killed = start('wait');
    const second = await report(killed);
    killed.kill('SIGKILL');
    await once(killed, 'exit');
    await until('the child to end with its launcher', () => !processAlive(second.pid), 5000);
  });
});
