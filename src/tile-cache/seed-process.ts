import { spawn } from 'node:child_process';

import { childEnvironment } from '../config.js';
import { SeedProgress, SeedRetries } from './seed-progress.js';
import { MAPPROXY_PYTHON } from './validate.js';

/** What a seed run is given: a signal that stops it, and where its progress goes. */
export interface SeedRun {
  signal: AbortSignal;
  progress(done: number, total: number): void;
}

export interface SeedFiles {
  /** The project's MapProxy configuration. */
  proxy: string;
  /** The seed configuration (seedConfig). */
  seed: string;
  kind: 'seed' | 'truncate';
}

/**
 * Runs `mapproxy-seed` under a Python parent that the kernel signals when this process dies, even
 * by SIGKILL (`PR_SET_PDEATHSIG`), and that then kills its whole process group: a seed whose API
 * is gone, its worker processes too, writes nothing more.
 */
const DIE_WITH_PARENT = `
import ctypes, os, signal, subprocess, sys
signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
if os.getppid() == 1:
    os.killpg(0, signal.SIGKILL)
sys.exit(subprocess.call(['mapproxy-seed'] + sys.argv[1:]))
`;

/** Seeding processes; MapProxy's default. */
const SEED_CONCURRENCY = '2';
/** Output lines kept to explain a failure. */
const KEPT_LINES = 5;
const MAX_REASON = 400;

function reason(code: number | null, signal: NodeJS.Signals | null, lines: string[]): string {
  const why = lines.join(' ').replace(/\s+/g, ' ').trim().slice(0, MAX_REASON);
  const how = signal === null ? `exited with ${code}` : `was stopped by ${signal}`;
  return `mapproxy-seed ${how}${why === '' ? '' : `: ${why}`}`;
}

/**
 * Runs `mapproxy-seed` on the files as its own process group (it seeds with worker processes),
 * reporting its progress; the signal, or this process exiting, kills the whole group at once:
 * MapProxy writes each tile atomically, so what it leaves is a valid cache.
 */
export function runMapProxySeed(
  files: SeedFiles,
  run: SeedRun,
  env: Readonly<Record<string, string>>,
): Promise<{ tiles: number }> {
  return new Promise((resolve, reject) => {
    const task = files.kind === 'seed' ? '--seed=ALL' : '--cleanup=ALL';
    const args = ['-f', files.proxy, '-s', files.seed, '-c', SEED_CONCURRENCY, task];
    const child = spawn(MAPPROXY_PYTHON, ['-c', DIE_WITH_PARENT, ...args], {
      env: childEnvironment({ ...env, PYTHONUNBUFFERED: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group has already exited.
      }
    };
    const onAbort = (): void => kill();
    process.once('exit', kill);
    run.signal.addEventListener('abort', onAbort, { once: true });
    if (run.signal.aborted) kill();
    const progress = new SeedProgress();
    const last: string[] = [];
    const keep = (text: string): void => {
      for (const line of text.split(/[\r\n]/)) {
        if (line.trim() === '') continue;
        last.push(line);
        if (last.length > KEPT_LINES) last.shift();
      }
    };
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      keep(chunk);
      if (progress.feed(chunk)) run.progress(progress.done, progress.total);
    });
    const retries = new SeedRetries();
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      keep(chunk);
      if (retries.feed(chunk)) kill();
    });
    child.once('error', (error) => {
      process.off('exit', kill);
      reject(new Error(`mapproxy-seed could not start: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      process.off('exit', kill);
      run.signal.removeEventListener('abort', onAbort);
      if (run.signal.aborted) reject(run.signal.reason as Error);
      else if (retries.failure) reject(retries.failure);
      else if (code === 0) resolve({ tiles: progress.tiles });
      else reject(new Error(reason(code, signal, last)));
    });
  });
}
