import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { apiCall } from './http.js';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'main.ts');
const START_TIMEOUT_MS = 60_000;
/** The last lines logged are kept to explain a failed start. */
const KEPT_LOG_LINES = 200;

/** The API as a child process (`src/main.ts` through tsx, so it runs the current source). */
export interface ApiProcess {
  url: string;
  pid: number;
  /** Sends a request to this process and parses a JSON reply. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** The last lines it logged. */
  log(): string;
  /** Ends the process with SIGKILL, as a crash would, and waits until it is gone. */
  kill(): Promise<void>;
}

/** The address in Fastify's "Server listening at http://..." log line. */
function listeningUrl(line: string): string | undefined {
  try {
    const message = (JSON.parse(line) as { msg?: unknown }).msg;
    return typeof message === 'string' ? /^Server listening at (http:\/\/\S+)$/.exec(message)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

async function gone(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
}

/**
 * Starts the API on a loopback port of its own choosing with `env` added to this process's
 * environment; `prefix` is a command that runs it elsewhere (`ip netns exec <host>`).
 */
export async function startApiProcess(
  env: Record<string, string>,
  prefix: readonly string[] = [],
): Promise<ApiProcess> {
  const [program = process.execPath, ...args] = [...prefix, process.execPath, '--import', 'tsx', MAIN];
  const child = spawn(program, args, {
    env: { ...process.env, STEWARD_LISTEN: '127.0.0.1:0', STEWARD_LOGLEVEL: 'INFO', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const log = (): string => lines.join('\n');
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the API did not start within ${START_TIMEOUT_MS} ms:\n${log()}`)),
      START_TIMEOUT_MS,
    );
    for (const stream of [child.stdout, child.stderr]) {
      // Every line is read, or the child would block once the pipe is full.
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        if (lines.length > KEPT_LOG_LINES) lines.shift();
        const address = listeningUrl(line);
        if (address) {
          clearTimeout(timer);
          resolve(address);
        }
      });
    }
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the API exited (${signal ?? code}) before listening:\n${log()}`));
    });
  });
  try {
    const address = await url;
    return {
      url: address,
      pid: child.pid ?? 0,
      call: (method, path, body) => apiCall(address, method, path, body),
      log,
      async kill() {
        child.kill('SIGKILL');
        await gone(child);
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    await gone(child);
    throw error;
  }
}
