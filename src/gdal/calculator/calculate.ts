/**
 * The raster calculator: evaluates a parsed expression over the rasters it names and writes the
 * result as a Float32 GeoTIFF (see output.ts) to a local path or `/vsis3/<bucket>/<key>`. The
 * computation and the upload run in worker processes (`gdal-child.ts`), off this process's event
 * loop; this process prepares the output and moves it into place.
 */
import { BadRequest } from '../../errors.js';
import { runGdalTask, type TaskRun } from '../gdal-child.js';
import { isObjectStoragePath } from '../object-storage.js';
import { prepareOutputTarget } from '../output-target.js';
import { bandReferences, type ExpressionNode } from './ast.js';
import { type OutputFormat } from './format.js';
import { type Grid, type OpenedInputs, openInputs } from './inputs.js';
import { createOutputRaster, type OutputRaster } from './output.js';
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
}

/**
 * Local outputs are written uncompressed: tiles QGIS Server reads without decoding, and written at
 * the speed of the computation (ZSTD took 40% of its CPU time). Outputs bound for object storage
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

/**
 * Checks that `tree` can be computed over `sources` (layer name to GDAL datasource) into
 * `outputPath`, and returns the calculation. Nothing appears at `outputPath` unless the whole run
 * succeeds.
 */
export async function planCalculation(
  tree: ExpressionNode,
  sources: ReadonlyMap<string, string>,
  outputPath: string,
): Promise<PlannedCalculation> {
  if (bandReferences(tree).length === 0)
    throw new BadRequest('The expression must use at least one raster band, for example "dem@1".');
  const target = await prepareOutputTarget(outputPath);
  let grid: Grid;
  try {
    grid = await checkInputs(tree, sources);
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
      await target.discard();
      throw error;
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
): Promise<CalculationResult> {
  return (await planCalculation(tree, sources, outputPath))(run);
}
