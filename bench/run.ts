/**
 * `npm run bench`: every benchmark of the project, printed and written to bench/results/.
 * `npm run bench -- api` (or `processing`, `jobs`, `plugin`, `scale`, `pool`, `console`) runs the named suites only.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

import gdal from 'gdal-async';

import { localQgisVersion } from '../src/runtime/qgis-version.js';
import { runApiBench } from './api.js';
import { runConsoleBench } from './console.js';
import { runJobsBench } from './jobs.js';
import { runPluginBench } from './plugin.js';
import { runPoolBench } from './pool.js';
import { runProcessingBench } from './processing.js';
import { RESULTS, suiteMark, updateReadme } from './readme-performance.js';
import { runScaleBench } from './scale.js';

async function machine(): Promise<string> {
  return [
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
    `- Node.js ${process.version}, GDAL ${gdal.version}, QGIS Server ${(await localQgisVersion()) ?? 'unknown'}`,
  ].join('\n');
}

const sections = [`# Steward benchmarks\n\n${await machine()}`];
const suites: Array<[string, string, () => Promise<string>]> = [
  ['api', 'API', runApiBench],
  ['processing', 'raster processing', runProcessingBench],
  ['jobs', 'reads during a job', runJobsBench],
  ['plugin', 'monitoring plugin', runPluginBench],
  ['scale', 'writes, reads under writes and many projects', runScaleBench],
  ['pool', 'QGIS Server FastCGI pool', runPoolBench],
  ['console', 'web console', runConsoleBench],
];
const selected = process.argv.slice(2);
for (const [key, name, suite] of suites.filter(([key]) => selected.length === 0 || selected.includes(key))) {
  console.error(`bench: running ${name}...`);
  const report = await suite();
  console.log(report + '\n');
  sections.push(`${suiteMark(key)}\n${report}`);
}
const directory = RESULTS;
mkdirSync(directory, { recursive: true });
const subset = selected.length > 0 ? `-${selected.join('-')}` : '';
const file = join(directory, `bench-${new Date().toISOString().slice(0, 10)}${subset}.md`);
writeFileSync(file, sections.join('\n\n') + '\n');
console.error(`bench: report written to ${file}`);
await updateReadme();
console.error("bench: README's performance section regenerated from bench/results/");
