/**
 * The API as a process of its own, started as `npm run serve` starts it: Node on the compiled entry
 * point, so that a client in the bench process measures the API and not itself.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { freePort } from '../src/runtime/ports.js';
import { apiCall } from '../test/support/http.js';
import { waitFor } from '../test/support/wait.js';
import type { Caller } from './api.js';

const READY_TIMEOUT_MS = 30_000;

export interface ApiProcess {
  url: string;
  /** The API's own process: the child its launcher runs it in under the heap bound. */
  pid: number;
  close(): Promise<void>;
}

/** Resolves once the API answers /health/live; fails if its process ends first. */
function untilLive(url: string, child: ChildProcess): Promise<true> {
  return waitFor(
    'the API process to be live',
    async () => {
      if (child.exitCode !== null) throw new Error(`the API process ended with ${child.exitCode}`);
      return fetch(`${url}/health/live`).then(
        (response) => response.ok,
        () => false, // not listening yet
      );
    },
    READY_TIMEOUT_MS,
  );
}

/** The process the launcher runs the API in (src/runtime/heap-bound.ts), or the launcher if it needed none. */
function serving(launcher: number): number {
  const children = readFileSync(`/proc/${launcher}/task/${launcher}/children`, 'utf8').trim().split(/\s+/);
  return children[0] ? Number(children[0]) : launcher;
}

/** Node flags for the API process, to profile it (`--cpu-prof --cpu-prof-dir=...`): split at spaces. */
const NODE_FLAGS_VARIABLE = 'STEWARD_BENCH_API_NODE_FLAGS';

/** Starts the compiled API (`npm run bench` compiles it first) with `env` added to this process's. */
export async function startApiProcess(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const root = join(import.meta.dirname, '..');
  const flags = (process.env[NODE_FLAGS_VARIABLE] ?? '').split(' ').filter((flag) => flag !== '');
  const child = spawn(process.execPath, [...flags, join(root, 'dist', 'src', 'main.js')], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, ...env, STEWARD_LISTEN: `127.0.0.1:${port}` },
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await untilLive(url, child);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    pid: child.pid === undefined ? Number.NaN : serving(child.pid),
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** No QGIS Server listens there: suites that time the API alone start it so. */
export const NO_QGIS_SERVER = 'http://127.0.0.1:9/ows/';

export type CallableApi = ApiProcess & Caller;

/** The API process on `projectsDir`, with no QGIS Server and `env` added, and how to call it. */
export async function startApiAlone(projectsDir: string, env: Record<string, string> = {}): Promise<CallableApi> {
  const server = await startApiProcess({
    STEWARD_QGISSERVER_URL: NO_QGIS_SERVER,
    STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
    STEWARD_LOGLEVEL: 'ERROR',
    ...env,
  });
  return { ...server, call: (method: string, path: string, body?: unknown) => apiCall(server.url, method, path, body) };
}
