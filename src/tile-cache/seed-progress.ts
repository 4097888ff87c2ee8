import { BadGateway } from '../errors.js';

/**
 * Reads `mapproxy-seed`'s output as it comes: the number of tasks it starts with, the start of
 * each task, the percentage of the current task and the tiles it has handled. Lines end with a
 * newline or, for the percentage it rewrites in place, a carriage return.
 */
/** Whole lines of a process's output read in chunks; a line ends with a newline or a carriage return. */
class Lines {
  private rest = '';

  of(chunk: string): string[] {
    const lines = (this.rest + chunk).split(/[\r\n]/);
    this.rest = lines.pop() ?? '';
    return lines;
  }
}

export class SeedProgress {
  private tasks = 0;
  /** Tasks started, the current one included. */
  private started = 0;
  private percent = 0;
  private tilesBefore = 0;
  private tilesOfTask = 0;
  private readonly lines = new Lines();

  /** Feeds a chunk of output; returns whether the progress changed. */
  feed(chunk: string): boolean {
    let changed = false;
    for (const line of this.lines.of(chunk)) changed = this.line(line) || changed;
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

/**
 * Retries of a failed tile request before a seed is given up: MapProxy retries a hundred times
 * with a growing wait (an hour and a half), so a source QGIS Server refuses would hold the job that
 * long. Three retries (14 s) let a passing failure heal.
 */
const MAX_SOURCE_RETRIES = 3;
/** How MapProxy announces that it waits to retry a failed request (later releases spell it right). */
const RETRY_LINE = /^An error occurr?ed\. Retry in \d+ seconds/;
/** MapProxy's log line of the request that failed. */
const SOURCE_FAILURE = /could not retrieve (?:WMS map|tile): (.*)$/;

/** Reads `mapproxy-seed`'s error output for retries of failed tile requests. */
export class SeedRetries {
  private retries = 0;
  private lastFailure = '';
  private readonly lines = new Lines();
  /** Set once the seed should be given up: why. */
  failure: BadGateway | undefined;

  /** Feeds a chunk of error output; returns true when the seed is to be given up now. */
  feed(chunk: string): boolean {
    const before = this.failure;
    for (const line of this.lines.of(chunk)) this.line(line);
    return before === undefined && this.failure !== undefined;
  }

  private line(line: string): void {
    this.lastFailure = SOURCE_FAILURE.exec(line)?.[1] ?? this.lastFailure;
    if (!RETRY_LINE.test(line) || ++this.retries <= MAX_SOURCE_RETRIES || this.failure) return;
    this.failure = new BadGateway(
      `mapproxy-seed gave up after ${MAX_SOURCE_RETRIES} retries: ${this.lastFailure || line}`,
      {
        clientMessage: `QGIS Server did not draw the tiles MapProxy asked for, ${MAX_SOURCE_RETRIES} times; its answer is in Steward's log`,
      },
    );
  }
}
