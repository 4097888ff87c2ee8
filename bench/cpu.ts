/** CPU time of processes, from /proc: what a server spent, whatever else the machine runs. */
import { execFileSync } from 'node:child_process';

import { procStatFields } from '../src/runtime/proc-stat.js';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** User and system CPU seconds `pid` has used so far. */
function cpuSecondsOf(pid: number): number {
  const times = procStatFields(`/proc/${pid}/stat`, [14, 15]);
  if (!times) throw new Error(`process ${pid} has ended`);
  return (Number(times[0]) + Number(times[1])) / TICKS_PER_SECOND;
}

/** CPU seconds all of `pids` have used so far. */
export function cpuSeconds(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
}
