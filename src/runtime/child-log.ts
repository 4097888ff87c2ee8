import { type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Lines kept by default: QGIS Server writes about 25 per GetMap at INFO level. */
const KEPT_LINES = 50_000;

/**
 * The recent lines a child process writes to stdout and stderr. Older lines are dropped in blocks
 * once `limit` is passed, so the log of a server that runs for months cannot fill memory.
 */
export class ChildLog {
  private kept: string[] = [];

  constructor(
    child: ChildProcess,
    onLine?: (line: string) => void,
    private readonly limit = KEPT_LINES,
  ) {
    const record = (line: string): void => {
      if (line.length === 0) return;
      this.kept.push(line);
      if (this.kept.length > this.limit) this.kept = this.kept.slice(-Math.ceil(this.limit / 2));
      onLine?.(line);
    };
    for (const stream of [child.stdout, child.stderr])
      if (stream) createInterface({ input: stream }).on('line', record);
  }

  get lines(): readonly string[] {
    return this.kept;
  }
}
