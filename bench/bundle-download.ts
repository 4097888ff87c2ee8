/**
 * Download of a 100-layer project's bundle (`GET /api/projects/{p}/archive?data=true`), each layer
 * reading a GeoPackage of its own, timed against `zip -0` of the same files into the same folder.
 * The API runs as a process of its own; its CPU time is read from /proc beside the wall time, and
 * zip's from the shell's `time`.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

import { startApiProcess } from '../test/support/api-process.js';
import { servingProcess } from '../test/support/large-upload.js';
import { writePoints } from '../test/support/points.js';
import { cpuSeconds } from './cpu.js';
import { median, ms, table } from './stats.js';

const LAYERS = 100;
/** Points of each layer's GeoPackage (about 5 MiB each; STEWARD_BENCH_DOWNLOAD_POINTS). */
const POINTS = Number(process.env['STEWARD_BENCH_DOWNLOAD_POINTS'] ?? 60_000);
const RUNS = 5;
const TARGET_SHARE_OF_ZIP = 0.8;

interface Run {
  wallMs: number;
  cpuS: number;
}

/** Saves the answer of `url` to `path`: the API's wall and CPU time. */
async function download(url: string, path: string, pid: number): Promise<Run> {
  const cpu = cpuSeconds([pid]);
  const start = performance.now();
  await new Promise<void>((resolve, reject) => {
    get(url, (response) => {
      if (response.statusCode !== 200) reject(new Error(`the download answered ${response.statusCode}`));
      pipeline(response, createWriteStream(path)).then(resolve, reject);
    }).on('error', reject);
  });
  return { wallMs: performance.now() - start, cpuS: cpuSeconds([pid]) - cpu };
}

/** `zip -0` of `entries` of `folder` into `path`: its wall time, and its CPU time as bash's `time -p` reads it. */
function zipStored(folder: string, entries: string[], path: string): Run {
  const start = performance.now();
  const report = execFileSync('bash', ['-c', '{ time -p zip -0 -q -r "$@"; } 2>&1', 'zip', path, ...entries], {
    cwd: folder,
    encoding: 'utf8',
  });
  const wallMs = performance.now() - start;
  const seconds = (name: string): number => Number(new RegExp(`^${name} ([\\d.]+)$`, 'm').exec(report)?.[1] ?? NaN);
  return { wallMs, cpuS: seconds('user') + seconds('sys') };
}

function rate(mib: number, runs: Run[]): string {
  const wall = median(runs.map((run) => run.wallMs));
  const cpu = median(runs.map((run) => run.cpuS));
  return `${(mib / (wall / 1000)).toFixed(0)} MiB/s (${ms(wall)} ms, CPU ${cpu.toFixed(2)} s)`;
}

export async function runBundleDownloadBench(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'steward-bench-download-'));
  const data = join(folder, 'data');
  await mkdir(join(data, 'layers'), { recursive: true });
  const api = await startApiProcess({
    STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/',
    STEWARD_QGISSERVER_PROJECTS_DIR: join(folder, 'projects'),
    STEWARD_DATA_ROOTS: data,
  });
  try {
    const server = servingProcess(api.pid);
    const first = join(data, 'layers', 'layer-0.gpkg');
    writePoints(first, POINTS);
    const files = [first];
    for (let index = 1; index < LAYERS; index++) {
      files.push(join(data, 'layers', `layer-${index}.gpkg`));
      await copyFile(first, files[index] ?? '');
    }
    const bytes = (await Promise.all(files.map((file) => stat(file)))).reduce((sum, info) => sum + info.size, 0);
    const mib = bytes / 2 ** 20;
    await api.call('POST', '/api/projects/', { name: 'many', author: 'bench' });
    for (const [index, file] of files.entries()) {
      const added = await api.call('POST', '/api/projects/many/layers', {
        type: 'vector',
        name: `layer_${index}`,
        datasource: `${file}|layername=places`,
      });
      if (added.status !== 201)
        throw new Error(`layer ${index} answered ${added.status}: ${JSON.stringify(added.body)}`);
    }
    const ours: Run[] = [];
    const zips: Run[] = [];
    const url = `${api.url}/api/projects/many/archive?data=true`;
    for (let run = 0; run < RUNS; run++) {
      const bundle = join(folder, 'bundle.zip');
      ours.push(await download(url, bundle, server));
      await rm(bundle);
      const reference = join(folder, 'reference.zip');
      zips.push(zipStored(data, ['layers'], reference));
      await rm(reference);
    }
    const share = median(zips.map((run) => run.wallMs)) / median(ours.map((run) => run.wallMs));
    return [
      '## Bundle download',
      '',
      `A project of ${LAYERS} layers, each reading a GeoPackage of its own (${POINTS.toLocaleString('en')} points, ${mib.toFixed(0)} MiB in all), downloaded with \`GET /api/projects/many/archive?data=true\` into a file, against \`zip -0 -r\` of the same files into the same folder; medians of ${RUNS} runs taken in turn. CPU: the API process's (from /proc), zip's (bash's \`time\`).`,
      '',
      table(
        ['Work', 'Rate (median)', 'Target'],
        [
          ['`zip -0 -r` of the files', rate(mib, zips), '-'],
          [
            'bundle download (`GET .../archive?data=true`)',
            rate(mib, ours),
            `>= ${TARGET_SHARE_OF_ZIP * 100}% of zip -0: ${(share * 100).toFixed(0)}%, ${share >= TARGET_SHARE_OF_ZIP ? 'met' : 'NOT met'}`,
          ],
        ],
      ),
    ].join('\n');
  } finally {
    await api.kill();
    await rm(folder, { recursive: true, force: true });
  }
}
