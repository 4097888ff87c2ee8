import pino, { type Logger } from 'pino';

import { type LogLevel } from './config.js';

/** The levels a log line may have, by pino's number. */
export const LOG_LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
export type LineLevel = keyof typeof LOG_LEVELS;

/** Lines and bytes the recent log keeps when not told. */
export const RECENT_LINES = 2000;
export const RECENT_BYTES = 1024 * 1024;

interface Kept {
  cursor: number;
  level: number;
  line: string;
  bytes: number;
}

/** A line of the recent log as a reader gets it: its cursor, level, time, message and other fields. */
export interface RecentLine {
  cursor: number;
  level: LineLevel | 'unknown';
  time: string;
  message: string;
  fields: Record<string, unknown>;
}

export interface RecentAnswer {
  lines: RecentLine[];
  /** The cursor to ask with next time: the last line's. */
  next: number;
  /** Lines after the cursor asked with that were dropped before they could be read. */
  missed: number;
}

const LEVEL_NAMES = new Map<number, LineLevel>(
  Object.entries(LOG_LEVELS).map(([name, value]) => [value, name as LineLevel]),
);

/** The keys every line has that a reader has no use for, beside those answered on their own. */
const COMMON_KEYS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'service']);

/**
 * The process's own recent log lines in memory, the newest `maxLines` within `maxBytes`, each
 * numbered so that a reader asks only for what it has not read.
 */
export class RecentLog {
  private readonly kept: Kept[] = [];
  private bytes = 0;
  private last = 0;

  constructor(
    private readonly maxLines = RECENT_LINES,
    private readonly maxBytes = RECENT_BYTES,
  ) {}

  /** Keeps one line as pino writes it: a JSON object whose first key is the level. */
  add(line: string): void {
    const text = line.endsWith('\n') ? line.slice(0, -1) : line;
    const bytes = Buffer.byteLength(text);
    if (bytes > this.maxBytes) return;
    this.last += 1;
    this.kept.push({ cursor: this.last, level: Number(/^\{"level":(\d+)/.exec(text)?.[1] ?? 0), line: text, bytes });
    this.bytes += bytes;
    let dropped = 0;
    while (this.kept.length - dropped > this.maxLines || this.bytes > this.maxBytes) {
      this.bytes -= this.kept[dropped]?.bytes ?? 0;
      dropped += 1;
    }
    if (dropped > 0) this.kept.splice(0, dropped);
  }

  /**
   * The lines after `since` at `level` or above. A cursor past the last line is of an earlier
   * process (Steward restarted): the reader gets every line kept.
   */
  read(since: number, level: LineLevel = 'trace'): RecentAnswer {
    const after = since > this.last ? 0 : since;
    const first = this.kept[0]?.cursor ?? this.last + 1;
    const start = Math.max(0, after + 1 - first);
    const least = LOG_LEVELS[level];
    const lines = this.kept
      .slice(start)
      .filter((kept) => kept.level >= least)
      .map(parsed);
    return { lines, next: this.last, missed: Math.max(0, first - after - 1) };
  }
}

function parsed(kept: Kept): RecentLine {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(kept.line) as Record<string, unknown>;
  } catch {
    record = { msg: kept.line };
  }
  const fields = Object.fromEntries(Object.entries(record).filter(([key]) => !COMMON_KEYS.has(key)));
  const time = typeof record['time'] === 'number' ? new Date(record['time']).toISOString() : '';
  const message = typeof record['msg'] === 'string' ? record['msg'] : '';
  return { cursor: kept.cursor, level: LEVEL_NAMES.get(kept.level) ?? 'unknown', time, message, fields };
}

/** The process's logger: JSON lines on standard output, the recent ones also kept in `recent`. */
export function createLogger(level: LogLevel, recent: RecentLog): Logger {
  const out = pino.destination(1);
  return pino(
    { level, base: { service: 'steward' } },
    {
      write(line: string): void {
        out.write(line);
        recent.add(line);
      },
    },
  );
}
