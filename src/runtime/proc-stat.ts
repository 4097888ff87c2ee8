import { readFileSync } from 'node:fs';

/**
 * Field `field` (numbered from 1 as proc(5) numbers them: 4 the parent, 14 and 15 the user and
 * system time, 19 the niceness, 22 the start time) of a process's or thread's stat file
 * (`/proc/<pid>/stat`, `/proc/<pid>/task/<tid>/stat`); undefined when the file cannot be read,
 * as when the process has ended.
 */
export function procStatField(statPath: string, field: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(statPath, 'utf8');
  } catch {
    return undefined;
  }
  // The command's name (field 2) may hold spaces and parentheses: fields are counted after its last ')', from the third.
  return stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .at(field - 3);
}
