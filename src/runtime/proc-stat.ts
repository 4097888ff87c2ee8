import { readFileSync } from 'node:fs';

/**
 * Fields of a process's or thread's stat file (`/proc/<pid>/stat`, `/proc/<pid>/task/<tid>/stat`),
 * read once, each numbered from 1 as proc(5) numbers them (4 the parent, 14 and 15 the user and
 * system time, 19 the niceness, 22 the start time); undefined when the file cannot be read, as when
 * the process has ended.
 */
export function procStatFields(statPath: string, fields: readonly number[]): Array<string | undefined> | undefined {
  let stat: string;
  try {
    stat = readFileSync(statPath, 'utf8');
  } catch {
    return undefined;
  }
  // The command's name (field 2) may hold spaces and parentheses: fields are counted after its last ')', from the third.
  const fromThird = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.map((field) => fromThird[field - 3]);
}

/** One field of a stat file, as `procStatFields` reads it. */
export function procStatField(statPath: string, field: number): string | undefined {
  return procStatFields(statPath, [field])?.[0];
}
