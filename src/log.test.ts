import assert from 'node:assert/strict';

import pino from 'pino';

import { describe, it } from '../test/support/node-test.js';
import { RecentLog } from './log.js';

/** A logger writing only into `recent`, as the process's does besides standard output. */
function loggerInto(recent: RecentLog): pino.Logger {
  return pino({ level: 'debug', base: { service: 'steward' } }, { write: (line: string) => recent.add(line) });
}

describe('the recent log', () => {
  it('answers the lines after a cursor, with their level, time, message and fields', () => {
    const recent = new RecentLog();
    const logger = loggerInto(recent);
    logger.info('first');
    logger.warn({ project: 'town' }, 'second');
    const all = recent.read(0);
    assert.deepEqual(
      all.lines.map(({ cursor, level, message, fields }) => ({ cursor, level, message, fields })),
      [
        { cursor: 1, level: 'info', message: 'first', fields: {} },
        { cursor: 2, level: 'warn', message: 'second', fields: { project: 'town' } },
      ],
    );
    assert.match(all.lines[0]?.time ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual({ next: all.next, missed: all.missed }, { next: 2, missed: 0 });
    logger.error('third');
    const more = recent.read(all.next);
    assert.deepEqual(
      more.lines.map((line) => line.message),
      ['third'],
    );
    assert.equal(more.next, 3);
    assert.deepEqual(recent.read(3), { lines: [], next: 3, missed: 0 });
  });

  it('filters by the least level and still moves the cursor past what it leaves out', () => {
    const recent = new RecentLog();
    const logger = loggerInto(recent);
    logger.debug('quiet');
    logger.info('usual');
    logger.error('loud');
    logger.info('usual again');
    const warnings = recent.read(0, 'warn');
    assert.deepEqual(
      warnings.lines.map((line) => [line.cursor, line.message]),
      [[3, 'loud']],
    );
    assert.equal(warnings.next, 4);
    assert.deepEqual(
      recent.read(0, 'debug').lines.map((line) => line.message),
      ['quiet', 'usual', 'loud', 'usual again'],
    );
  });

  it('keeps the newest lines within its bounds and counts what a late reader missed', () => {
    const byLines = new RecentLog(3, 1024 * 1024);
    const logger = loggerInto(byLines);
    for (let index = 1; index <= 10; index++) logger.info(`line ${index}`);
    const late = byLines.read(2);
    assert.deepEqual(
      late.lines.map((line) => line.message),
      ['line 8', 'line 9', 'line 10'],
    );
    assert.deepEqual({ next: late.next, missed: late.missed }, { next: 10, missed: 5 });

    const byBytes = new RecentLog(1000, 400);
    const big = loggerInto(byBytes);
    for (let index = 1; index <= 10; index++) big.info('x'.repeat(100));
    const kept = byBytes.read(0).lines;
    assert.ok(kept.length >= 1 && kept.length <= 3, `${kept.length} lines of over 100 bytes kept within 400`);
    assert.deepEqual(
      kept.map((line) => line.cursor),
      Array.from({ length: kept.length }, (_, index) => 11 - kept.length + index),
    );
    // A line larger than the whole bound is not kept, and drops nothing.
    big.info('y'.repeat(500));
    assert.equal(byBytes.read(0).lines.at(-1)?.cursor, 10);
  });

  it('answers every line kept to a cursor from before a restart', () => {
    const recent = new RecentLog();
    const logger = loggerInto(recent);
    logger.info('after the restart');
    const answer = recent.read(5000);
    assert.deepEqual(
      answer.lines.map((line) => line.message),
      ['after the restart'],
    );
    assert.equal(answer.next, 1);
  });
});
