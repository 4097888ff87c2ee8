/** The Python side of the raster processing tests: numpy, GDAL's bindings and gdal_calc.py. */
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const SCRIPT = fileURLToPath(new URL('./raster_oracle.py', import.meta.url));
const runFile = promisify(execFile);

export interface HistogramAnswer {
  min: number;
  max: number;
  values: number[];
}

export interface CalcComparison {
  shape_equal: boolean;
  nodata_mismatches: number;
  valid: number;
  nodata: number;
  max_diff: number;
  span: number;
}

export interface OverviewComparison {
  shape: number[];
  expected_shape: number[];
  nodata_mismatches: number;
  max_diff: number;
}

export function askOracle<T>(request: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/python3', [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(out) as T);
      else reject(new Error(`raster_oracle.py ${String(request['command'])} failed: ${err}`));
    });
    child.stdin.end(JSON.stringify(request));
  });
}

/** numpy.histogram of the valid pixels of every band (`min` alone: up to the band's max). */
export function numpyHistogram(
  path: string,
  options: { min?: number; max?: number; count?: number },
): Promise<Record<string, HistogramAnswer>> {
  return askOracle({ command: 'histogram', path, ...options });
}

export function gdalHistogram(
  path: string,
  min: number,
  max: number,
  count: number,
): Promise<Record<string, number[]>> {
  return askOracle({ command: 'gdal-histogram', path, min, max, count });
}

/** Runs Debian's gdal_calc.py: `inputs` maps its letters (A, B, ...) to files, band 1 unless given. */
export async function gdalCalc(
  calc: string,
  inputs: Record<string, { path: string; band?: number }>,
  output: string,
  noData: number,
): Promise<void> {
  const files = Object.entries(inputs).flatMap(([letter, input]) => [
    `-${letter}`,
    input.path,
    `--${letter}_band=${input.band ?? 1}`,
  ]);
  await runFile(
    '/usr/bin/gdal_calc.py',
    [
      ...files,
      `--outfile=${output}`,
      `--calc=${calc}`,
      '--type=Float32',
      `--NoDataValue=${noData}`,
      '--overwrite',
      '--quiet',
    ],
    {
      env: { ...process.env, PYTHONWARNINGS: 'ignore' },
    },
  );
}
