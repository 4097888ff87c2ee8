/** Runs the API on a projects folder, reads every project and its layers, prints peak RSS in KiB. */
import { readdirSync, readFileSync } from 'node:fs';

import { startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';

const [projectsDir = '', qgisServerUrl = ''] = process.argv.slice(2);
const server = await startServer(
  loadConfig({
    STEWARD_QGISSERVER_URL: qgisServerUrl,
    STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
    STEWARD_LOGLEVEL: 'ERROR',
    STEWARD_LISTEN: '127.0.0.1:0',
  }),
);
for (const project of readdirSync(projectsDir)) {
  for (const path of [
    `/api/projects/${project}`,
    `/api/projects/${project}/layers`,
    `/api/projects/${project}/layers/layer50`,
  ]) {
    const response = await fetch(server.url + path);
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    await response.arrayBuffer();
  }
}
await server.close();
// VmHWM is this process's own peak: getrusage's maxRSS carries the parent's peak across fork and exec.
const peak = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
process.stdout.write(`${peak}\n`);
