import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';

import { after, describe, it } from '../../test/support/node-test.js';
import { procStatField, procStatFields } from './proc-stat.js';

const folder = mkdtempSync(join(tmpdir(), 'steward-proc-stat-'));
after(() => rmSync(folder, { recursive: true, force: true }));

describe('procStatField', () => {
  it("reads this process's parent and niceness", () => {
    assert.equal(procStatField('/proc/self/stat', 4), String(process.ppid));
    assert.equal(procStatField(`/proc/${process.pid}/task/${process.pid}/stat`, 19), String(getPriority()));
    assert.deepEqual(procStatFields('/proc/self/stat', [4, 19]), [String(process.ppid), String(getPriority())]);
  });

  it('counts fields after a command name holding spaces and parentheses', async () => {
    const oddName = join(folder, 'odd ) name (x');
    symlinkSync('/bin/sleep', oddName);
    const child = spawn(oddName, ['5']);
    try {
      await once(child, 'spawn');
      assert.equal(procStatField(`/proc/${child.pid}/stat`, 4), String(process.pid));
    } finally {
      child.kill();
    }
  });

  it('is undefined for a process that does not exist', () => {
    assert.equal(procStatField('/proc/999999999/stat', 4), undefined);
  });
});
