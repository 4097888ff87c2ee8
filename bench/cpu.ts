/** CPU time of processes, from /proc: what a server spent, whatever else the machine runs. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

import { procStatFields } from '../src/runtime/proc-stat.js';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** User and system CPU seconds `pid` has used so far: all its threads, or the thread `tid` of it. */
function cpuSecondsOf(pid: number, tid?: number): number {
  const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  const times = procStatFields(path, [14, 15]);
  if (!times) throw new Error(`process ${pid} has ended`);
  return (Number(times[0]) + Number(times[1])) / TICKS_PER_SECOND;
}

/** CPU seconds the main thread of `pid` has used so far: a Node process's event loop. */
export function mainThreadCpuSeconds(pid: number): number {
  return cpuSecondsOf(pid, pid);
}

/** CPU seconds all of `pids` have used so far. */
export function cpuSeconds(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
}

/** The processes descending from `root`, now. */
export function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(procStatFields(`/proc/${entry}/stat`, [4])?.[0]);
    if (Number.isFinite(parent)) parents.set(Number(entry), parent);
  }
  const within = (pid: number): boolean => {
    for (let at = parents.get(pid); at !== undefined && at > 1; at = parents.get(at)) if (at === root) return true;
    return false;
  };
  return [...parents.keys()].filter(within);
}

/** CPU seconds used so far by each process descending from `root` (a browser's, a server's), by pid. */
export function descendantsCpu(root: number = process.pid): Map<number, number> {
  const used = new Map<number, number>();
  for (const pid of descendants(root)) {
    const times = procStatFields(`/proc/${pid}/stat`, [14, 15]);
    if (times) used.set(pid, (Number(times[0]) + Number(times[1])) / TICKS_PER_SECOND);
  }
  return used;
}

/**
 * CPU nanoseconds the threads of `pids` have used so far (schedstat's first field): finer than
 * the stat file's ticks of 10 ms, for the CPU time of a single request.
 */
export function threadsCpuNanoseconds(pids: readonly number[]): number {
  let sum = 0;
  for (const pid of pids) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // ended
    }
    for (const task of tasks) {
      try {
        sum += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // the thread ended
      }
    }
  }
  return sum;
}

/** CPU seconds the processes of `now` used since `before` (a process started since counts whole). */
export function cpuSince(before: Map<number, number>, now: Map<number, number>): number {
  let sum = 0;
  for (const [pid, seconds] of now) sum += seconds - (before.get(pid) ?? 0);
  return sum;
}
