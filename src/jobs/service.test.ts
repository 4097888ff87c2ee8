import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { after, describe, it } from '../../test/support/node-test.js';
import { until } from '../../test/support/wait.js';
import { Conflict, NotFound } from '../errors.js';
import { FilesystemJobStore } from './filesystem-jobs.js';
import { type JobRecord } from './record.js';
import { type JobContext, JobService } from './service.js';

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function store(): FilesystemJobStore {
  const dir = mkdtempSync(join(tmpdir(), 'steward-jobs-'));
  dirs.push(dir);
  return new FilesystemJobStore(dir);
}

const ref = (name: string): { name: string; schema: string } => ({ name, schema: 'public' });

/** Work that waits until released (or cancelled), recording when it started. */
function gate(log: string[], name: string): { work: (context: JobContext) => Promise<undefined>; open(): void } {
  let open = (): void => undefined;
  const released = new Promise<void>((resolve) => (open = resolve));
  return {
    open: () => open(),
    work: async ({ signal }) => {
      log.push(name);
      await Promise.race([
        released,
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
      ]);
      return undefined;
    },
  };
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  return Number(child.stdout.trim());
}

describe('job service', () => {
  it('runs at most `concurrency` jobs, taking projects in turn, and records each state', async () => {
    const jobs = new JobService(store(), { concurrency: 2, withSchema: false, progressWriteMs: 5 });
    const started: string[] = [];
    const gates = ['a1', 'a2', 'a3', 'a4', 'b1', 'c1'].map((name) => ({ name, ...gate(started, name) }));
    const records: JobRecord[] = [];
    for (const { name, work } of gates) {
      records.push(await jobs.submit({ kind: 'test', project: ref(name[0] ?? ''), params: { name } }, work));
    }
    await until('two jobs to start', async () => started.length === 2, 10_000, 10);
    assert.deepEqual(started, ['a1', 'a2']);
    assert.equal((await jobs.list({ state: 'running' })).length, 2);
    assert.equal((await jobs.list({ state: 'queued' })).length, 4);
    // As jobs end, the waiting projects come before a's third job.
    gates[0]?.open();
    await until('a third job to start', async () => started.length === 3, 10_000, 10);
    gates[1]?.open();
    await until('a fourth job to start', async () => started.length === 4, 10_000, 10);
    assert.deepEqual(started, ['a1', 'a2', 'b1', 'c1']);
    gates[4]?.open();
    await until('a fifth job to start', async () => started.length === 5, 10_000, 10);
    for (const entry of gates.slice(2)) entry.open();
    await until('six jobs to succeed', async () => (await jobs.list({ state: 'succeeded' })).length === 6, 10_000, 10);
    assert.deepEqual(started, ['a1', 'a2', 'b1', 'c1', 'a3', 'a4']);
    const done = await jobs.get(records[0]?.id ?? '');
    assert.equal(done.progress, 1);
    assert.ok(done.started !== null && done.finished !== null && done.finished >= done.started);
    assert.deepEqual(
      (await jobs.list({ project: 'a' })).map((job) => job.params['name']),
      ['a4', 'a3', 'a2', 'a1'],
    );
    await jobs.close();
  });

  it('reports progress and the result, and fails with the error of the work', async () => {
    const jobs = new JobService(store(), { concurrency: 1, withSchema: true, progressWriteMs: 5 });
    const seen: number[] = [];
    const ok = await jobs.submit({ kind: 'test', project: ref('p'), params: {} }, async ({ progress }) => {
      progress(3, 12);
      await until('three steps done', async () => (await jobs.get(ok.id)).done === 3, 10_000, 10);
      seen.push((await jobs.get(ok.id)).progress);
      return { tiles: 12 };
    });
    const failing = await jobs.submit({ kind: 'test', project: ref('p'), params: {} }, async () => {
      throw new Error('source unreachable');
    });
    await until('the job to fail', async () => (await jobs.get(failing.id)).state === 'failed', 10_000, 10);
    assert.deepEqual(seen, [0.25]);
    const succeeded = await jobs.get(ok.id);
    assert.equal(succeeded.state, 'succeeded');
    assert.deepEqual([succeeded.done, succeeded.total, succeeded.result], [12, 12, { tiles: 12 }]);
    assert.equal(succeeded.schema, 'public');
    assert.equal((await jobs.get(failing.id)).error, 'source unreachable');
    await jobs.close();
  });

  it('cancels queued and running jobs, refuses to cancel an ended one, and knows no other id', async () => {
    const jobs = new JobService(store(), { concurrency: 1, withSchema: false });
    const started: string[] = [];
    const running = gate(started, 'running');
    const first = await jobs.submit({ kind: 'test', project: ref('p'), params: {} }, running.work);
    const second = await jobs.submit({ kind: 'test', project: ref('p'), params: {} }, gate(started, 'never').work);
    await until('the job to start', async () => started.length === 1, 10_000, 10);
    assert.equal((await jobs.cancel(second.id)).state, 'cancelled');
    const cancelled = await jobs.cancel(first.id);
    assert.equal(cancelled.state, 'cancelled');
    assert.equal(cancelled.error, null);
    await assert.rejects(jobs.cancel(first.id), Conflict);
    await assert.rejects(jobs.get('00000000-0000-4000-8000-000000000000'), NotFound);
    await assert.rejects(jobs.get('../../etc/passwd'), NotFound);
    await sleep(20);
    assert.deepEqual(started, ['running']);
    await jobs.close();
  });

  it('fails the jobs of a dead process when a new one starts, and leaves a live process its jobs', async () => {
    const shared = store();
    const now = new Date().toISOString();
    const base = {
      kind: 'seed',
      project: 'p',
      progress: 0.5,
      done: 1,
      total: 2,
      created: now,
      started: now,
      finished: null,
      error: null,
      params: {},
      heartbeat: now,
    };
    const dead = { ...base, id: '11111111-1111-4111-8111-111111111111', state: 'running' as const };
    const alive = { ...base, id: '22222222-2222-4222-8222-222222222222', state: 'running' as const };
    const stale = { ...base, id: '33333333-3333-4333-8333-333333333333', state: 'queued' as const };
    await shared.insert({ ...dead, owner: { pid: deadPid(), host: hostname() } });
    // The parent of this process is alive; a process elsewhere counts as alive while its heartbeat is fresh.
    await shared.insert({ ...alive, owner: { pid: process.ppid, host: hostname() } });
    await shared.insert({
      ...stale,
      owner: { pid: 1, host: 'elsewhere' },
      heartbeat: new Date(Date.now() - 60_000).toISOString(),
    });
    const jobs = new JobService(shared, { concurrency: 1, withSchema: false });
    await jobs.start();
    const failed = await jobs.get(dead.id);
    assert.equal(failed.state, 'failed');
    assert.match(failed.error ?? '', /stopped before the job ended/);
    assert.equal((await jobs.get(alive.id)).state, 'running');
    assert.equal((await jobs.get(stale.id)).state, 'failed');
    await jobs.close();
  });
});
