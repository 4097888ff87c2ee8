/**
 * Import into PostGIS against `ogr2ogr` with the same options, on a generated GeoPackage of a
 * million points: Steward's side is the `import` task its jobs run, in a GDAL worker process
 * at the background niceness; ogr2ogr runs at that niceness too. Runs are taken in turn, each
 * replacing its own table, so that both meet the same page cache and database state.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import gdal from 'gdal-async';

import { postgresConnection } from '../src/gdal/catalog.js';
import { keepWorkerReady, runGdalTask, stopWorkerReady } from '../src/gdal/gdal-child.js';
import { importArguments, type VectorImport } from '../src/gdal/vector-import.js';
import { BACKGROUND_NICENESS } from '../src/runtime/niceness.js';
import { writePoints } from '../test/support/points.js';
import { startTestDatabase, type TestDatabase } from '../test/support/postgres.js';
import { ms, table } from './stats.js';

const FEATURES = 1_000_000;
const RUNS = 5;
const TARGET_RATIO = 1.2;
const run = promisify(execFile);

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** The median, and the spread from the fastest to the slowest run. */
function withSpread(values: number[]): { median: number; fastest: number; slowest: number; text: string } {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  const [fastest = 0, slowest = 0] = [sorted[0], sorted.at(-1)];
  return { median, fastest, slowest, text: `${ms(median)} ms (${ms(fastest)} to ${ms(slowest)})` };
}

/** Whether one side's slowest run beat the other's fastest: a ratio inside the spreads is the machine's noise. */
function apart(ours: { fastest: number; slowest: number }, theirs: { fastest: number; slowest: number }): string {
  if (ours.slowest < theirs.fastest) return 'yes, Steward faster';
  return theirs.slowest < ours.fastest ? 'yes, ogr2ogr faster' : 'no';
}

async function rowsOf(db: TestDatabase, table: string): Promise<number> {
  const [row] = await db.sql<{ n: string }>(`SELECT count(*)::text AS n FROM public.${table}`);
  return Number(row?.n);
}

export async function runImportBench(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'steward-bench-import-'));
  const db = await startTestDatabase();
  try {
    const source = join(folder, 'points.gpkg');
    writePoints(source, FEATURES);
    const options = (table: string): VectorImport => ({
      source,
      layerName: 'places',
      destination: postgresConnection(db.service),
      schema: 'public',
      table,
      mode: 'overwrite',
    });
    const ours = (): Promise<unknown> => runGdalTask({ kind: 'import', options: options('steward_points') });
    const theirs = (): Promise<unknown> => {
      const reference = options('ogr2ogr_points');
      const args = importArguments(reference, 'places', gdal.wkbPoint);
      // ogr2ogr takes the destination and the source before the layer names.
      args.splice(args.length - 1, 0, reference.destination, source);
      return run('nice', ['-n', String(BACKGROUND_NICENESS), 'ogr2ogr', ...args]);
    };
    await keepWorkerReady();
    await ours();
    await theirs();
    const steward: number[] = [];
    const reference: number[] = [];
    for (let index = 0; index < RUNS; index += 1) {
      steward.push(await timed(ours));
      reference.push(await timed(theirs));
    }
    stopWorkerReady();
    const rows = [await rowsOf(db, 'steward_points'), await rowsOf(db, 'ogr2ogr_points')];
    const { stdout: version } = await run('ogr2ogr', ['--version']);
    const [ourTime, theirTime] = [withSpread(steward), withSpread(reference)];
    const ratio = ourTime.median / theirTime.median;
    return [
      '## Import into PostGIS',
      '',
      `A GeoPackage of ${FEATURES.toLocaleString('en')} points with a text field into a new table (overwrite), with \`${importArguments(options('t'), 'places', gdal.wkbPoint).slice(0, -1).join(' ')}\`. Median of ${RUNS} runs of each side after one warm-up, taken in turn, with their spread. Steward: the \`import\` task of its jobs in a worker process kept ready (GDAL ${gdal.version}); reference: ${version.trim()}, both at niceness ${BACKGROUND_NICENESS}. Rows in the tables after the runs: ${rows.join(' and ')}.`,
      '',
      table(
        [
          'Import',
          'Steward, median (spread)',
          'ogr2ogr, median (spread)',
          'Time ratio',
          'Apart beyond the spread',
          'Target',
        ],
        [
          [
            `${FEATURES.toLocaleString('en')} points`,
            ourTime.text,
            theirTime.text,
            `${ratio.toFixed(2)}x`,
            apart(ourTime, theirTime),
            `at most ${TARGET_RATIO}x: ${ratio <= TARGET_RATIO ? 'met' : 'not met'}`,
          ],
        ],
      ),
    ].join('\n');
  } finally {
    stopWorkerReady();
    await db.stop();
    await rm(folder, { recursive: true, force: true });
  }
}
