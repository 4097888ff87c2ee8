/**
 * Reads `mapproxy-seed`'s output as it comes: the number of tasks it starts with, the start of
 * each task, the percentage of the current task and the tiles it has handled. Lines end with a
 * newline or, for the percentage it rewrites in place, a carriage return.
 */
export class SeedProgress {
  private tasks = 0;
  /** Tasks started, the current one included. */
  private started = 0;
  private percent = 0;
  private tilesBefore = 0;
  private tilesOfTask = 0;
  private rest = '';

  /** Feeds a chunk of output; returns whether the progress changed. */
  feed(chunk: string): boolean {
    const lines = (this.rest + chunk).split(/[\r\n]/);
    this.rest = lines.pop() ?? '';
    let changed = false;
    for (const line of lines) changed = this.line(line) || changed;
    return changed;
  }

  private line(line: string): boolean {
    const start = /^Start (?:seeding|cleanup) process \((\d+) tasks?\)/.exec(line);
    if (start) {
      this.tasks = Number(start[1]);
      return true;
    }
    if (/^\s+(?:Seeding|Cleaning up) cache '/.test(line)) {
      this.started += 1;
      this.tilesBefore += this.tilesOfTask;
      this.tilesOfTask = 0;
      this.percent = 0;
      return true;
    }
    const step = /^\[[\d:]+\]\s+(?:\d+\s+)?(\d+(?:\.\d+)?)%/.exec(line);
    if (!step) return false;
    this.percent = Math.min(100, Number(step[1]));
    const tiles = /\((\d+) tiles\)\s*$/.exec(line);
    if (tiles) this.tilesOfTask = Number(tiles[1]);
    return true;
  }

  /** Percent points of all tasks: 100 for each task, `total` 0 until the task count is known. */
  get done(): number {
    return Math.max(0, this.started - 1) * 100 + Math.floor(this.percent);
  }

  get total(): number {
    return this.tasks * 100;
  }

  /** Tiles (of metatiles, as MapProxy counts them) the tasks handled. */
  get tiles(): number {
    return this.tilesBefore + this.tilesOfTask;
  }
}
