/**
 * `npm run bench`: every benchmark of the project, printed and written to bench/results/.
 * `npm run bench -- api` (or `processing`, `jobs`, `plugin`, `scale`, `pool`, `kills`, `console`, `history`,
 * `uploads`, `downloads`, `import`, `organize`, `access`) runs the named suites only;
 * `--part <part>` (repeated for more) runs only those parts of them (scale: writes, reads, memory; api:
 * latency, throughput, map, fastcgi, passthrough, memory; processing: calculator, histogram; access:
 * check, nginx, filter) and only prints them, as `--print-only` does for whole suites: nothing is written to
 * bench/results/ or the README.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import gdal from 'gdal-async';

import { localQgisVersion } from '../src/runtime/qgis-version.js';
import { ACCESS_PARTS, runAccessBench } from './access.js';
import { API_PARTS, runApiBench } from './api.js';
import { runBundleDownloadBench } from './bundle-download.js';
import { runConsoleBench } from './console.js';
import { HISTORY_PARTS, runHistoryBench } from './history.js';
import { runJobsBench } from './jobs.js';
import { runOrganizeBench } from './organize.js';
import { EVERY_PART, type PartFilter } from './parts.js';
import { runPluginBench } from './plugin.js';
import { runPoolBench } from './pool.js';
import { runPoolKillsBench } from './pool-kills.js';
import { runImportBench } from './postgres-import.js';
import { PROCESSING_PARTS, runProcessingBench } from './processing.js';
import { RESULTS, suiteMark, updateReadme } from './readme-performance.js';
import { runScaleBench, SCALE_PARTS } from './scale.js';
import { runUploadsBench } from './uploads.js';

async function machine(): Promise<string> {
  return [
    `- date: ${new Date().toISOString()}`,
    `- machine: ${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
    `- Node.js ${process.version}, GDAL ${gdal.version}, QGIS Server ${(await localQgisVersion()) ?? 'unknown'}`,
  ].join('\n');
}

interface Suite {
  key: string;
  name: string;
  run: (runs: PartFilter) => Promise<string>;
  /** The parts `--part` can name; a suite without is run whole. */
  parts?: readonly string[];
}

const suites: Suite[] = [
  { key: 'api', name: 'API', run: runApiBench, parts: API_PARTS },
  { key: 'processing', name: 'raster processing', run: runProcessingBench, parts: PROCESSING_PARTS },
  { key: 'jobs', name: 'reads during a job', run: runJobsBench },
  { key: 'plugin', name: 'monitoring plugin', run: runPluginBench },
  { key: 'scale', name: 'writes, reads under writes and many projects', run: runScaleBench, parts: SCALE_PARTS },
  { key: 'pool', name: 'QGIS Server FastCGI pool', run: runPoolBench },
  { key: 'kills', name: 'the pool under kills', run: runPoolKillsBench },
  { key: 'console', name: 'web console', run: runConsoleBench },
  { key: 'history', name: 'project versions', run: runHistoryBench, parts: HISTORY_PARTS },
  { key: 'uploads', name: 'streamed uploads', run: runUploadsBench },
  { key: 'downloads', name: 'bundle download', run: runBundleDownloadBench },
  { key: 'import', name: 'import into PostGIS', run: runImportBench },
  { key: 'organize', name: 'organizing a project', run: runOrganizeBench },
  { key: 'access', name: 'access control', run: runAccessBench, parts: ACCESS_PARTS },
];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { part: { type: 'string', multiple: true, default: [] }, 'print-only': { type: 'boolean', default: false } },
});
const parts = values.part;
const chosen = suites.filter(({ key }) => positionals.length === 0 || positionals.includes(key));
const selected =
  parts.length === 0 ? chosen : chosen.filter((suite) => suite.parts?.some((part) => parts.includes(part)));
const unknown = parts.filter((part) => !selected.some((suite) => suite.parts?.includes(part)));
if (selected.length === 0 || unknown.length > 0) {
  const known = chosen.map((suite) => `${suite.key}: ${suite.parts?.join(', ') ?? 'run whole'}`).join('; ');
  console.error(`bench: no suite has the part(s) ${unknown.join(', ')} (${known})`);
  process.exit(2);
}

const sections = [`# Steward benchmarks\n\n${await machine()}`];
for (const { key, name, run } of selected) {
  console.error(`bench: running ${name}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}...`);
  const report = await run(parts.length === 0 ? EVERY_PART : (part) => parts.includes(part));
  console.log(report + '\n');
  sections.push(`${suiteMark(key)}\n${report}`);
}
// A report of some parts must not stand for its suite in bench/results/ and the README.
if (!values['print-only'] && parts.length === 0) {
  const directory = RESULTS;
  mkdirSync(directory, { recursive: true });
  const subset = positionals.length > 0 ? `-${positionals.join('-')}` : '';
  const file = join(directory, `bench-${new Date().toISOString().slice(0, 10)}${subset}.md`);
  writeFileSync(file, sections.join('\n\n') + '\n');
  console.error(`bench: report written to ${file}`);
  await updateReadme();
  console.error("bench: README's performance section regenerated from bench/results/");
}
