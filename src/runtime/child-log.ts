import { type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Lines kept by default: QGIS Server writes about 25 per GetMap at INFO level. */
const KEPT_LINES = 50_000;

/**
 * The recent lines a child process writes to stdout and stderr (of each of its runs, when it is
 * started again: `follow`). Older lines are dropped in blocks once `limit` is passed, so the log of
 * a server that runs for months cannot fill memory.
 */
export class ChildLog {
  private kept: string[] = [];

  constructor(
    child: ChildProcess | undefined,
    private readonly onLine?: (line: string, stream: 'stdout' | 'stderr') => void,
    private readonly limit = KEPT_LINES,
  ) {
    if (child) this.follow(child);
  }

  /** Keeps the lines of `child` too (the same program started again). */
  follow(child: ChildProcess): void {
    const record = (line: string, stream: 'stdout' | 'stderr'): void => {
      if (line.length === 0) return;
      this.kept.push(line);
      if (this.kept.length > this.limit) this.kept = this.kept.slice(-Math.ceil(this.limit / 2));
      this.onLine?.(line, stream);
    };
    if (child.stdout) createInterface({ input: child.stdout }).on('line', (line) => record(line, 'stdout'));
    if (child.stderr) createInterface({ input: child.stderr }).on('line', (line) => record(line, 'stderr'));
  }

  get lines(): readonly string[] {
    return this.kept;
  }
}
