/**
 * scripts/bounded-node.sh, which `npm start`, `npm run serve` and the systemd unit start the entry
 * points with: the entry point runs in the process the script started, under the heap bound of its
 * settings, with no launcher left behind. Needs the compiled checkout (scripts/setup.sh builds it).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { after, describe, it } from './support/node-test.js';

const MIB = 1024 * 1024;
const script = resolve(import.meta.dirname, '..', 'scripts', 'bounded-node.sh');
const folder = mkdtempSync(join(tmpdir(), 'steward-bounded-node-'));
after(() => rmSync(folder, { recursive: true, force: true }));

/** An entry point that reports its heap limit, its process and its parent, then exits with 7. */
const ENTRY = join(folder, 'entry.mjs');
writeFileSync(
  ENTRY,
  `import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size;
console.log(JSON.stringify({ limit: getHeapStatistics().heap_size_limit, young, pid: process.pid, ppid: process.ppid }));
process.exit(7);
`,
);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  pid: number | undefined;
}

async function bounded(env: NodeJS.ProcessEnv): Promise<Run> {
  const child = spawn('sh', [script, ENTRY], { env: { ...process.env, NODE_OPTIONS: '', ...env } });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr, pid: child.pid };
}

describe('scripts/bounded-node.sh', () => {
  it('runs the entry point in its own process under STEWARD_HEAP_MB', async () => {
    const run = await bounded({ STEWARD_HEAP_MB: '100', STEWARD_PROJECT_CACHE_MB: '50' });
    const reported = JSON.parse(run.stdout) as { limit: number; young: number; pid: number; ppid: number };
    assert.equal(run.code, 7);
    assert.equal(reported.pid, run.pid, 'the script ran the entry point in a child instead of becoming it');
    assert.equal(reported.ppid, process.pid);
    // The old generation's 100 MiB and the young generation's semi-spaces.
    assert.ok(reported.limit > 100 * MIB && reported.limit < 200 * MIB, `heap limit ${reported.limit / MIB} MiB`);
    // The young generation starts at the size it is kept at, where Node would start it at 1 MiB.
    assert.equal(reported.young, 16 * MIB);
  });

  it("bounds the heap by default (the cache's 128 MiB and 256), and leaves Node's bound with 0", async () => {
    const limit = async (env: NodeJS.ProcessEnv): Promise<number> =>
      (JSON.parse((await bounded(env)).stdout) as { limit: number }).limit / MIB;
    const byDefault = await limit({ STEWARD_HEAP_MB: '', STEWARD_PROJECT_CACHE_MB: '' });
    assert.ok(byDefault > 384 && byDefault < 500, `heap limit ${byDefault} MiB`);
    const nodes = await limit({ STEWARD_HEAP_MB: '0' });
    assert.ok(nodes > 1024, `heap limit ${nodes} MiB`);
  });

  it('refuses a bad setting before starting the entry point', async () => {
    const run = await bounded({ STEWARD_HEAP_MB: 'lots' });
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^steward: STEWARD_HEAP_MB must be a whole number of MiB/);
  });
});
