import { readdirSync, readFileSync } from 'node:fs';

import { procStatField } from '../../src/runtime/proc-stat.js';

/** Each process's parent, by pid. */
function parents(): Map<number, number> {
  const found = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    const parent = procStatField(`/proc/${entry}/stat`, 4);
    if (parent !== undefined) found.set(Number(entry), Number(parent)); // else ended meanwhile
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
  return readdirSync(`/proc/${pid}/task`).map((thread) =>
    Number(procStatField(`/proc/${pid}/task/${thread}/stat`, 19)),
  );
}
