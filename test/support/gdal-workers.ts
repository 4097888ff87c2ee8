import { readdirSync, readFileSync } from 'node:fs';

/** Each process's parent, by pid. */
function parents(): Map<number, number> {
  const found = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, { encoding: 'utf8', flag: 'r' });
      found.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Ended meanwhile.
    }
  }
  return found;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** The GDAL worker processes under the API process `pid` (which may run its server in a child with heap flags). */
export function gdalWorkers(pid: number): number[] {
  const parentOf = parents();
  const under = (process: number): boolean => {
    const parent = parentOf.get(process);
    return parent === pid || (parent !== undefined && parent > 1 && under(parent));
  };
  return [...parentOf.keys()].filter((process) => under(process) && commandLine(process).includes('gdal-child-main'));
}

/** The niceness of each thread of process `pid`. */
export function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((thread) => {
    const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
    // The fields after the command's closing parenthesis start at the third, the state; the 19th is the niceness.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}
