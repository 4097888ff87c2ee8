/**
 * The one way the entry points bound their V8 heap (docs/project-edits.md). V8 sizes its heap limit
 * once, when the process starts, from the machine's memory, and lets the garbage of parsing projects
 * grow towards it before collecting, far past what the project cache keeps. Flags are the only way
 * to set it, so an entry point started without a bound runs its own script again in a child Node
 * given them, and stays as a launcher that passes signals on and ends with it.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

const HEAP_FLAG = /^--max[-_]old[-_]space[-_]size(=|$)/;
/** Tells the relaunched child which process launched it. */
const LAUNCHER_VARIABLE = 'STEWARD_HEAP_LAUNCHER';
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Whether Node already runs with an old-generation bound, from its arguments or NODE_OPTIONS. */
export function heapBounded(execArgv: readonly string[], nodeOptions = ''): boolean {
  return [...execArgv, ...nodeOptions.split(/\s+/)].some((argument) => HEAP_FLAG.test(argument));
}

/**
 * The young generation's settings that go with a bound. V8 shrinks the young generation once a
 * full collection finds little memory in use, and a server answering many small requests then
 * scavenges far more often; 16 MiB semi-spaces are V8's largest for these heaps, so the peak is no
 * higher. Scavenging on the main thread alone: on the few cores the API shares with QGIS Server, a
 * scavenge waited for helper threads that were not running (figures: docs/project-edits.md).
 */
const YOUNG_GENERATION_FLAGS = ['--min-semi-space-size=16', '--no-parallel-scavenge'];

/** The Node flags that bound the old generation to `limitMb`. */
function heapFlags(limitMb: number): string[] {
  return [`--max-old-space-size=${limitMb}`, ...YOUNG_GENERATION_FLAGS];
}

/** This script again, in a child Node bounded to `limitMb`; resolves with the exit code to end with. */
function relaunch(limitMb: number, env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(
    process.execPath,
    [...heapFlags(limitMb), ...process.execArgv, ...process.argv.slice(1)],
    // The IPC channel closes when this launcher goes, however it goes; the child then ends too.
    { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], env: { ...env, [LAUNCHER_VARIABLE]: String(process.pid) } },
  );
  // A terminal's Ctrl-C reaches both processes; the child's handlers take a repeated signal as one.
  for (const signal of FORWARDED_SIGNALS) process.on(signal, () => child.kill(signal));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
}

/** In a relaunched child: end at once when the launcher is gone, as it would have with it. */
function followLauncher(env: NodeJS.ProcessEnv): void {
  if (env[LAUNCHER_VARIABLE] !== String(process.ppid) || !process.channel) return;
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}

/**
 * Makes sure the entry point runs with its heap bounded to `limitMb` (undefined: Node's own
 * bound). Resolves with undefined when this process is the one to go on (already bounded, or no
 * bound asked), or with the exit code of the bounded child this process has run the script in.
 */
export async function runBounded(limitMb: number | undefined, env: NodeJS.ProcessEnv): Promise<number | undefined> {
  if (limitMb === undefined || heapBounded(process.execArgv, env['NODE_OPTIONS'])) {
    followLauncher(env);
    return undefined;
  }
  return relaunch(limitMb, env);
}
