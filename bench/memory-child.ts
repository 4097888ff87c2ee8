/**
 * Runs the API on a projects folder and reads every project and its layers once; prints, as JSON,
 * its peak RSS in KiB, the median time of GET /api/projects and of a project's first (parsing) read.
 */
import { readdirSync, readFileSync } from 'node:fs';

import { startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { summarise } from './stats.js';

const LIST_RUNS = 20;

const [projectsDir = '', qgisServerUrl = ''] = process.argv.slice(2);
const server = await startServer(
  loadConfig({
    STEWARD_QGISSERVER_URL: qgisServerUrl,
    STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
    STEWARD_LOGLEVEL: 'ERROR',
    STEWARD_LISTEN: '127.0.0.1:0',
  }),
);

async function timedGet(path: string): Promise<number> {
  const start = performance.now();
  const response = await fetch(server.url + path);
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  await response.arrayBuffer();
  return performance.now() - start;
}

const firstReads: number[] = [];
for (const project of readdirSync(projectsDir)) {
  firstReads.push(await timedGet(`/api/projects/${project}/layers`));
  await timedGet(`/api/projects/${project}`);
  await timedGet(`/api/projects/${project}/layers/layer50`);
}
const lists: number[] = [];
for (let run = 0; run < LIST_RUNS; run++) lists.push(await timedGet('/api/projects'));
await server.close();
// VmHWM is this process's own peak: getrusage's maxRSS carries the parent's peak across fork and exec.
const peak = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
process.stdout.write(
  `${JSON.stringify({ peak, list: summarise(lists).median, firstRead: summarise(firstReads).median })}\n`,
);
