/**
 * Runs the API on a projects folder and reads every project and its layers once; prints, as JSON,
 * its peak RSS in KiB, the median time of GET /api/projects and of a project's first (parsing) read.
 * It starts as the service's entry point does (src/main.ts): started without a heap bound, it
 * would run itself again under one, and the launcher would print its own peak on a line of its own.
 */
import { readdirSync, readFileSync } from 'node:fs';

import { heapBoundMb, loadConfig } from '../src/config.js';
import { runBounded } from '../src/runtime/heap-bound.js';
import { summarise } from './stats.js';

const LIST_RUNS = 20;

/** This process's own peak: getrusage's maxRSS carries the parent's peak across fork and exec. */
function peakKiB(): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
}

async function readEveryProject(projectsDir: string, qgisServerUrl: string): Promise<void> {
  const { startServer } = await import('../src/app/server.js');
  const server = await startServer(
    loadConfig({
      STEWARD_QGISSERVER_URL: qgisServerUrl,
      STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
      STEWARD_LOGLEVEL: 'ERROR',
      STEWARD_LISTEN: '127.0.0.1:0',
    }),
  );
  const timedGet = async (path: string): Promise<number> => {
    const start = performance.now();
    const response = await fetch(server.url + path);
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    await response.arrayBuffer();
    return performance.now() - start;
  };
  const firstReads: number[] = [];
  for (const project of readdirSync(projectsDir).filter((entry) => !entry.startsWith('.'))) {
    firstReads.push(await timedGet(`/api/projects/${project}/layers`));
    await timedGet(`/api/projects/${project}`);
    await timedGet(`/api/projects/${project}/layers/layer50`);
  }
  const lists: number[] = [];
  for (let run = 0; run < LIST_RUNS; run++) lists.push(await timedGet('/api/projects'));
  await server.close();
  const result = { peak: peakKiB(), list: summarise(lists).median, firstRead: summarise(firstReads).median };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

const [projectsDir = '', qgisServerUrl = ''] = process.argv.slice(2);
const exitCode = await runBounded(heapBoundMb(process.env), process.env);
if (exitCode === undefined) {
  await readEveryProject(projectsDir, qgisServerUrl);
} else {
  process.stdout.write(`${JSON.stringify({ launcherPeak: peakKiB() })}\n`);
  process.exitCode = exitCode;
}
