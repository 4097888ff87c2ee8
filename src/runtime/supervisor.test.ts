import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { describe, it } from '../../test/support/node-test.js';
import { until } from '../../test/support/wait.js';
import { processAlive } from './process-alive.js';
import { type ChildSpec, Supervisor } from './supervisor.js';

interface Logged {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

function supervisorLogging(): { supervisor: Supervisor; logged: Logged[]; restarts: string[] } {
  const logged: Logged[] = [];
  const restarts: string[] = [];
  const supervisor = new Supervisor({
    log: {
      info: (fields, message) => logged.push({ level: 'info', fields, message }),
      warn: (fields, message) => logged.push({ level: 'warn', fields, message }),
    },
    onRestart: (child) => restarts.push(child),
  });
  return { supervisor, logged, restarts };
}

function node(name: string, script: string): ChildSpec {
  return { name, command: process.execPath, args: ['-e', script], env: process.env };
}

/** Whether process `pid` is gone or a zombie (whoever adopted it may not reap it at once). */
function gone(pid: number): boolean {
  if (!processAlive(pid)) return true;
  try {
    return /^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

describe('Supervisor', () => {
  it('starts a child that exits again, each time later, says so and counts it', async () => {
    const { supervisor, logged, restarts } = supervisorLogging();
    const started: number[] = [];
    const child = supervisor.start({
      ...node('quitter', `console.error('up'); process.exit(3)`),
      onLine: (line) => line === 'up' && started.push(Date.now()),
    });
    try {
      await until('three starts', () => started.length >= 3);
      const [first = 0, second = 0, third = 0] = started;
      // 250 ms, then 500 ms, plus the time Node takes to start (which a loaded machine varies).
      assert.ok(second - first >= 250, `${second - first} ms`);
      assert.ok(third - second >= 500, `${third - second} ms`);
      assert.ok(child.restarts >= 2);
      assert.deepEqual(restarts.slice(0, 2), ['quitter', 'quitter']);
      const said = logged.filter(({ level }) => level === 'warn');
      assert.deepEqual(said[0]?.fields, {
        child: 'quitter',
        pid: said[0]?.fields['pid'],
        code: 3,
        signal: null,
        restartInMs: 250,
      });
      assert.equal(said[0]?.message, 'quitter exited (code 3); starting it again in 250 ms');
      assert.equal(said[1]?.fields['restartInMs'], 500);
      const lines = logged.filter(({ level }) => level === 'info');
      assert.deepEqual(lines[0], { level: 'info', fields: { child: 'quitter', stream: 'stderr' }, message: 'up' });
    } finally {
      await supervisor.stop();
    }
  });

  it("kills what is left of a child's process group when it exits, and stops it for good", async () => {
    const { supervisor, restarts } = supervisorLogging();
    const grandchildren: number[] = [];
    // The child leaves a process of its group behind (as an nginx worker would be), then exits.
    const script = `const { spawn } = require('node:child_process');
      const worker = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      console.log(String(worker.pid));
      setTimeout(() => process.exit(1), 200);`;
    const child = supervisor.start({
      ...node('leaver', script),
      onLine: (line) => grandchildren.push(Number(line)),
    });
    try {
      await until('a restart', () => restarts.length >= 1 && grandchildren.length >= 2);
      await until('the first worker to be killed', () => gone(grandchildren[0] ?? 0), 2000);
    } finally {
      await supervisor.stop();
    }
    assert.equal(child.running, false);
    const count = child.restarts;
    await sleep(600);
    assert.equal(child.restarts, count, 'a stopped child is not started again');
    for (const pid of grandchildren) await until(`worker ${pid} to be killed`, () => gone(pid), 5000);
  });

  it('stops a child that ignores SIGTERM with SIGKILL', async () => {
    const { supervisor } = supervisorLogging();
    const child = supervisor.start(
      node('stubborn', `process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000)`),
    );
    await until('the child to start', () => child.log.includes('up'));
    const pid = child.pid ?? 0;
    const began = Date.now();
    await supervisor.stop();
    assert.ok(Date.now() - began >= 2900, 'SIGTERM was given its time');
    assert.ok(gone(pid));
  });
});
