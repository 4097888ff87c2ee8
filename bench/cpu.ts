/** CPU time of processes, from /proc: what a server spent, whatever else the machine runs. */
import { execFileSync } from 'node:child_process';

import { procStatField } from '../src/runtime/proc-stat.js';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** User and system CPU seconds `pid` has used so far. */
function cpuSecondsOf(pid: number): number {
  const stat = `/proc/${pid}/stat`;
  return (Number(procStatField(stat, 14)) + Number(procStatField(stat, 15))) / TICKS_PER_SECOND;
}

/** CPU seconds all of `pids` have used so far. */
export function cpuSeconds(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
}
