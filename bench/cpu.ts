/** CPU time of processes, from /proc: what a server spent, whatever else the machine runs. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** User and system CPU seconds `pid` has used so far. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After the command's closing parenthesis: state is field 3, utime 14 and stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** CPU seconds all of `pids` have used so far. */
export function cpuSeconds(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0);
}
