/**
 * Raster processing against what a user would otherwise run, on a generated pair of
 * 8000 x 8000 Float32 GeoTIFFs: the calculator against gdal_calc.py, the histogram against
 * `gdalinfo -hist`. Every job runs in a fresh process (Steward's compiled when `npm run build` has
 * made dist/, else through tsx), alternating with the reference so both meet the same page cache.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import gdal from 'gdal-async';

import { BACKGROUND_NICENESS } from '../src/runtime/niceness.js';
import { EVERY_PART, type PartFilter } from './parts.js';
import { ms, summarise, table, type Timing } from './stats.js';

const SIZE = 8000;
const RUNS = 5;
const run = promisify(execFile);

interface Sample {
  wallMs: number;
  /** The job itself, without starting Node or Python (Steward only: what an API request costs). */
  jobMs: number;
  maxRssKiB: number;
}

/** Smooth fields with noise, like two bands of an image; written uncompressed in strips, GDAL's default. */
function writeInput(path: string, seed: number): void {
  const dataset = gdal.drivers.get('GTiff').create(path, SIZE, SIZE, 1, 'Float32');
  dataset.geoTransform = [500000, 10, 0, 4000000, 0, -10];
  dataset.srs = gdal.SpatialReference.fromEPSG(32631);
  const band = dataset.bands.get(1);
  const rows = 500;
  const pixels = new Float32Array(SIZE * rows);
  let state = seed;
  for (let y0 = 0; y0 < SIZE; y0 += rows) {
    for (let i = 0; i < pixels.length; i++) {
      const x = i % SIZE;
      const y = y0 + Math.floor(i / SIZE);
      state = (state * 1103515245 + 12345) % 2147483648;
      pixels[i] =
        1000 +
        500 * Math.sin(x / (300 + seed * 50)) * Math.cos(y / (400 + seed * 30)) +
        (state / 2147483648 - 0.5) * 20;
    }
    band.pixels.write(0, y0, SIZE, rows, pixels);
  }
  dataset.close();
}

function stewardChild(): { command: string; args: string[]; compiled: boolean } {
  const compiled = join(import.meta.dirname, '..', 'dist', 'bench', 'processing-child.js');
  if (existsSync(compiled)) return { command: process.execPath, args: [compiled], compiled: true };
  return {
    command: process.execPath,
    args: ['--import', 'tsx', join(import.meta.dirname, 'processing-child.ts')],
    compiled: false,
  };
}

/**
 * Runs a command under /usr/bin/time for its peak resident memory. Not the child's own
 * getrusage(): a process forked from this one starts with this one's peak, tens of MiB too high.
 */
async function timed(command: string, args: string[]): Promise<{ wallMs: number; stdout: string; maxRssKiB: number }> {
  const start = performance.now();
  const { stdout, stderr } = await run('/usr/bin/time', ['-f', 'maxrss=%M', command, ...args], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = performance.now() - start;
  const peak = /maxrss=(\d+)/.exec(stderr);
  return { wallMs, stdout, maxRssKiB: Number(peak?.[1] ?? Number.NaN) };
}

async function steward(args: string[]): Promise<Sample> {
  const child = stewardChild();
  const { wallMs, stdout, maxRssKiB } = await timed(child.command, [...child.args, ...args]);
  const { ms: jobMs } = JSON.parse(stdout) as { ms: number };
  return { wallMs, jobMs, maxRssKiB };
}

async function reference(command: string, args: string[]): Promise<Sample> {
  const { wallMs, maxRssKiB } = await timed(command, args);
  return { wallMs, jobMs: wallMs, maxRssKiB };
}

/** A reference run at the niceness of Steward's worker processes, so both get the same share of a busy machine. */
function niceReference(command: string, args: string[]): Promise<Sample> {
  return reference('nice', ['-n', String(BACKGROUND_NICENESS), command, ...args]);
}

interface Comparison {
  steward: Sample[];
  reference: Sample[];
}

/**
 * Each job once to warm up, then `runs` rounds of every job, the first changing from round to
 * round, so that all meet the same machine; the samples by job.
 */
async function inTurn(runs: number, jobs: (() => Promise<Sample>)[]): Promise<Sample[][]> {
  for (const job of jobs) await job();
  const samples = jobs.map((): Sample[] => []);
  for (let round = 0; round < runs; round++) {
    for (let step = 0; step < jobs.length; step++) {
      const index = (round + step) % jobs.length;
      samples[index]?.push(await (jobs[index] as () => Promise<Sample>)());
    }
  }
  return samples;
}

async function alternate(
  runs: number,
  ours: () => Promise<Sample>,
  theirs: () => Promise<Sample>,
): Promise<Comparison> {
  const [steward = [], reference = []] = await inTurn(runs, [ours, theirs]);
  return { steward, reference };
}

const median = (samples: Sample[], key: keyof Sample): Timing => summarise(samples.map((sample) => sample[key]));
const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
const walls = (samples: Sample[], key: keyof Sample): number[] => samples.map((sample) => sample[key]);
/** "1234 ms (1100 to 1500)": the median and the spread of the runs. */
const withSpread = (values: number[]): string =>
  `${ms(summarise(values).median)} ms (${ms(Math.min(...values))} to ${ms(Math.max(...values))})`;

/**
 * Whether `ours` wins beyond the spread of both: its slowest run is faster than the other's
 * fastest. A ratio of medians inside the spread says nothing a second report could not reverse.
 */
function beyondSpread(ours: number[], theirs: number[]): boolean {
  return Math.max(...ours) < Math.min(...theirs);
}

function rows(
  name: string,
  reference: string,
  comparison: Comparison,
  target: string,
  met: (ratio: number, rssMiB: number) => boolean,
): string[] {
  const job = median(comparison.steward, 'jobMs').median;
  const wall = median(comparison.steward, 'wallMs').median;
  const theirs = median(comparison.reference, 'wallMs').median;
  const rss = median(comparison.steward, 'maxRssKiB').median;
  const ratio = job / theirs;
  const ours = walls(comparison.steward, 'jobMs');
  const references = walls(comparison.reference, 'wallMs');
  return [
    name,
    `${withSpread(ours)} (process: ${ms(wall)} ms)`,
    `${reference}: ${withSpread(references)}`,
    `${ratio.toFixed(2)}x (process: ${(wall / theirs).toFixed(2)}x)`,
    beyondSpread(ours, references) ? 'yes' : 'no',
    `${mib(rss)} vs ${mib(median(comparison.reference, 'maxRssKiB').median)}`,
    `${target}: ${met(ratio, rss / 1024) ? 'met' : 'not met'}`,
  ];
}

const HEADER = [
  'Job (8000 x 8000 Float32)',
  'Steward, median (spread)',
  'Reference, median (spread)',
  'Time ratio (lower is faster)',
  'Faster beyond the spread',
  'Peak RSS Steward vs reference',
  'Target',
];

async function calculatorRow(folder: string, a: string): Promise<string[]> {
  const b = join(folder, 'b.tif');
  writeInput(b, 2);
  const calc = await alternate(
    RUNS,
    () => steward(['calc', a, b, join(folder, 'steward.tif')]),
    () =>
      niceReference('/usr/bin/gdal_calc.py', [
        '-A',
        a,
        '-B',
        b,
        `--outfile=${join(folder, 'gdal_calc.tif')}`,
        '--calc=(A-B)/(A+B)',
        '--type=Float32',
        '--overwrite',
        '--quiet',
      ]),
  );
  return rows(
    'Calculator ("a@1" - "b@1") / ("a@1" + "b@1")',
    'gdal_calc.py',
    calc,
    'at least 2x faster (time ratio <= 0.5), peak RSS under 150 MiB',
    (ratio, rss) => ratio <= 0.5 && rss < 150,
  );
}

async function histogramRow(a: string): Promise<string[]> {
  // gdalinfo keeps the histogram in a.tif.aux.xml; remove it so every run computes it.
  const gdalinfoHist = async (): Promise<Sample> => {
    const sample = await reference('gdalinfo', ['-hist', a]);
    await rm(`${a}.aux.xml`, { force: true });
    return sample;
  };
  const hist = await alternate(RUNS, () => steward(['hist', a]), gdalinfoHist);
  return rows('Histogram of a band', 'gdalinfo -hist', hist, 'at most 1x', (ratio) => ratio <= 1);
}

/** The parts of the suite, in the order they run. */
export const PROCESSING_PARTS = ['calculator', 'histogram'];

export async function runProcessingBench(runs: PartFilter = EVERY_PART): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'steward-bench-raster-'));
  try {
    const a = join(folder, 'a.tif');
    writeInput(a, 1);
    const tableRows: string[][] = [];
    if (runs('calculator')) tableRows.push(await calculatorRow(folder, a));
    if (runs('histogram')) tableRows.push(await histogramRow(a));
    const compiled = stewardChild().compiled
      ? 'compiled'
      : 'through tsx (run `npm run build` for the compiled figures)';
    return [
      '## Raster processing',
      '',
      `Median of ${RUNS} runs of each side after one warm-up, taken in turn (the first changing from round to round), with their spread (fastest to slowest), each job in a fresh process (Steward ${compiled}). "Steward" is the job as an API request runs it, with the worker process the API keeps ready; "process" adds starting Node and loading GDAL in the bench's process and the worker. "Faster beyond the spread": Steward's slowest run beat the reference's fastest. Both calculators write uncompressed Float32 GeoTIFFs; Steward's is tiled, with overviews and no-data, computed on every core in a worker process at niceness ${BACKGROUND_NICENESS}, and gdal_calc.py runs at the same niceness. The histogram is exact with 1000 bins over every pixel; gdalinfo -hist computes 256.`,
      '',
      table(HEADER, tableRows),
    ].join('\n');
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
