/**
 * The raster calculator: evaluates a parsed expression over the rasters it names and writes the
 * result as a Float32 GeoTIFF (see output.ts) to a local path or `/vsis3/<bucket>/<key>`. The
 * computation and the upload run in worker processes (`gdal-child.ts`), off this process's event
 * loop; this process prepares the output and moves it into place.
 */
import { stat } from 'node:fs/promises';

import { BadRequest } from '../../errors.js';
import { whenDiskFull } from '../../storage/disk-space.js';
import { runGdalTask, type TaskRun } from '../gdal-child.js';
import { isObjectStoragePath } from '../object-storage.js';
import { checkOutput, type OutputLimits, rasterBytes, UNLIMITED } from '../output-limits.js';
import { type OutputOptions, prepareOutputTarget } from '../output-target.js';
import { bandReferences, type ExpressionNode } from './ast.js';
import { type OutputFormat } from './format.js';
import { type Grid, type OpenedInputs, openInputs } from './inputs.js';
import { createOutputRaster, MAX_OVERVIEW_FACTOR, type OutputRaster } from './output.js';
import { runCalculation, type WindowProgress } from './runner.js';

/**
 * Computes `tree` over `sources` into the local GeoTIFF `workPath`, in this process: the task the
 * worker process of `gdal-child.ts` runs. `progress` is told of each window written.
 */
export async function computeRaster(
  tree: ExpressionNode,
  sources: ReadonlyMap<string, string>,
  workPath: string,
  format: OutputFormat,
  progress?: WindowProgress,
): Promise<void> {
  let inputs: OpenedInputs | undefined;
  let output: OutputRaster | undefined;
  try {
    inputs = await openInputs(bandReferences(tree), sources);
    output = await createOutputRaster(workPath, inputs.grid, format);
    await runCalculation(tree, inputs.bands, output, progress);
  } finally {
    output?.dataset.close();
    inputs?.close();
  }
  await checkWritten(workPath, inputs.grid, format);
}

/**
 * GDAL reports a write that failed as it flushes its cache at close (a disk that filled) only as
 * a message, and leaves a truncated file: an uncompressed output shorter than its pixels is one.
 */
async function checkWritten(path: string, grid: Grid, format: OutputFormat): Promise<void> {
  if (format !== 'uncompressed') return;
  const { size } = await stat(path);
  const pixels = grid.width * grid.height * Float32Array.BYTES_PER_ELEMENT;
  if (size < pixels) throw new Error(`the output was not written whole: ${size} bytes for ${pixels} bytes of pixels`);
}

/**
 * Local outputs are written uncompressed: tiles QGIS Server reads without decoding, and written at
 * the speed of the computation (ZSTD took a large share of its CPU time, docs/jobs.md). Outputs bound for object storage
 * are ZSTD-compressed, since their upload costs more than the compression.
 */
function outputFormat(outputPath: string): OutputFormat {
  return isObjectStoragePath(outputPath) ? 'zstd' : 'uncompressed';
}

/** Opens the inputs as the computation will, so that a missing band or raster fails the request itself. */
async function checkInputs(tree: ExpressionNode, sources: ReadonlyMap<string, string>): Promise<Grid> {
  const inputs = await openInputs(bandReferences(tree), sources);
  const { grid } = inputs;
  inputs.close();
  return grid;
}

/** What a calculation made: the output and its size. */
export type CalculationResult = {
  output: string;
  width: number;
  height: number;
};

/** A calculation checked and ready to run; `run` stops it (nothing is left at the output) and follows its windows. */
export type PlannedCalculation = (run?: TaskRun) => Promise<CalculationResult>;

/** Bytes of the calculator's output over `grid`: Float32 pixels and their overviews, uncompressed. */
function outputBytes(grid: Grid): number {
  return rasterBytes(grid.width, grid.height, Float32Array.BYTES_PER_ELEMENT, MAX_OVERVIEW_FACTOR);
}

export interface CalculationOptions extends OutputOptions {
  /** Bounds on the output's estimated size; none unless told. */
  limits?: OutputLimits;
}

/**
 * Checks that `tree` can be computed over `sources` (layer name to GDAL datasource) into
 * `outputPath`, within `options.limits`, and returns the calculation. Nothing appears at
 * `outputPath` unless the whole run succeeds.
 */
export async function planCalculation(
  tree: ExpressionNode,
  sources: ReadonlyMap<string, string>,
  outputPath: string,
  options: CalculationOptions = {},
): Promise<PlannedCalculation> {
  if (bandReferences(tree).length === 0)
    throw new BadRequest('The expression must use at least one raster band, for example "dem@1".');
  const target = await prepareOutputTarget(outputPath, options);
  let grid: Grid;
  try {
    grid = await checkInputs(tree, sources);
    await checkOutput(outputBytes(grid), target.workFolder, options.limits ?? UNLIMITED, `Output ${outputPath}`);
  } catch (error) {
    await target.discard();
    throw error;
  }
  return async (run = {}) => {
    try {
      const task = {
        kind: 'calculate' as const,
        tree,
        sources: Object.fromEntries(sources),
        workPath: target.workPath,
        format: outputFormat(outputPath),
      };
      await runGdalTask(task, run);
      await target.publish(run);
    } catch (error) {
      const failure = run.signal?.aborted ? error : await whenDiskFull(error, target.workFolder);
      await target.discard();
      throw failure;
    }
    return { output: outputPath, width: grid.width, height: grid.height };
  };
}

/** Computes `tree` and writes it to `outputPath` (see planCalculation). */
export async function calculateRaster(
  tree: ExpressionNode,
  sources: ReadonlyMap<string, string>,
  outputPath: string,
  run?: TaskRun,
  options?: CalculationOptions,
): Promise<CalculationResult> {
  return (await planCalculation(tree, sources, outputPath, options))(run);
}
