/**
 * Instructions a QGIS Server process executes, counted by valgrind's callgrind: a count the
 * machine's other load does not change, where CPU time and throughput on a shared VM follow it
 * (and where the VM exposes no hardware counters to `perf stat`). The server runs under valgrind,
 * some 30 times slower, so only counts come from it, never times.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { QgisServerProcess } from '../src/runtime/qgis-server.js';

/** QGIS Server's start (Python plugins loaded) takes about a minute under valgrind on a busy machine. */
const READY_WITHIN_MS = 300_000;

const run = promisify(execFile);

/** A qgis_mapserver under callgrind, whose instructions can be counted over a piece of work. */
export class CountedServer {
  private dumps = 0;

  private constructor(
    readonly server: QgisServerProcess,
    private readonly directory: string,
    private readonly instrumentedAtStart: boolean,
  ) {}

  /**
   * The server, or undefined when valgrind is not installed. `instrumentAtStart: false` leaves
   * callgrind's instrumentation off but while `instructions` counts: QGIS Server starts several
   * times faster, which a busy machine needs, and the counts are the same.
   */
  static async start(
    env: NodeJS.ProcessEnv,
    { instrumentAtStart = true }: { instrumentAtStart?: boolean } = {},
  ): Promise<CountedServer | undefined> {
    if (!(await valgrindInstalled())) return undefined;
    const directory = mkdtempSync(join(tmpdir(), 'steward-bench-callgrind-'));
    const command = [
      'valgrind',
      '--tool=callgrind',
      `--callgrind-out-file=${join(directory, 'out')}`,
      ...(instrumentAtStart ? [] : ['--instr-atstart=no']),
      'qgis_mapserver',
    ];
    try {
      return new CountedServer(
        await QgisServerProcess.start({ env, command, readyWithinMs: READY_WITHIN_MS }),
        directory,
        instrumentAtStart,
      );
    } catch (error) {
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
  }

  /** Instructions the whole process (every thread) executed while `work` ran. */
  async instructions(work: () => Promise<unknown>): Promise<number> {
    const pid = String(this.server.child.pid);
    if (!this.instrumentedAtStart) await run('callgrind_control', ['--instr=on', pid]);
    await run('callgrind_control', ['--zero', pid]);
    await work();
    await run('callgrind_control', ['--dump', pid]);
    if (!this.instrumentedAtStart) await run('callgrind_control', ['--instr=off', pid]);
    this.dumps += 1;
    return instructionsOfDump(readFileSync(join(this.directory, `out.${this.dumps}`), 'utf8'));
  }

  async stop(): Promise<void> {
    await this.server.stop();
    rmSync(this.directory, { recursive: true, force: true });
  }
}

const valgrindInstalled = (): Promise<boolean> =>
  run('valgrind', ['--version']).then(
    () => true,
    () => false,
  );

/** The instructions a callgrind dump counts (its `summary:` line: events are Ir alone by default). */
export function instructionsOfDump(dump: string): number {
  const summary = /^summary: (\d+)/m.exec(dump)?.[1];
  if (summary === undefined) throw new Error('callgrind dump without a summary line');
  return Number(summary);
}
