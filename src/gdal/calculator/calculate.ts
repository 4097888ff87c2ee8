/**
 * The raster calculator: evaluates a parsed expression over the rasters it names and writes the
 * result as a Float32 GeoTIFF (see output.ts) to a local path or `/vsis3/<bucket>/<key>`.
 */
import { BadRequest } from '../../errors.js';
import { prepareOutputTarget } from '../output-target.js';
import { bandReferences, type ExpressionNode } from './ast.js';
import { compileExpression } from './compiler.js';
import { type OpenedInputs, openInputs } from './inputs.js';
import { createOutputRaster, OUTPUT_NO_DATA, type OutputRaster } from './output.js';
import { runCalculation } from './runner.js';

async function compute(inputs: OpenedInputs, tree: ExpressionNode, workPath: string): Promise<void> {
  const kernel = compileExpression(
    tree,
    inputs.bands.map((input) => ({ key: input.key, storage: input.type.storage, noData: input.noData })),
    OUTPUT_NO_DATA,
  );
  let output: OutputRaster | undefined;
  try {
    output = await createOutputRaster(workPath, inputs.grid);
    await runCalculation(kernel, inputs.bands, output);
  } finally {
    output?.dataset.close();
  }
}

/**
 * Computes `tree` and writes it to `outputPath`. `sources` maps each layer name the expression
 * uses to its GDAL datasource. Nothing appears at `outputPath` unless the whole run succeeds.
 */
export async function calculateRaster(
  tree: ExpressionNode,
  sources: ReadonlyMap<string, string>,
  outputPath: string,
): Promise<void> {
  const references = bandReferences(tree);
  if (references.length === 0)
    throw new BadRequest('The expression must use at least one raster band, for example "dem@1".');
  const target = await prepareOutputTarget(outputPath);
  let inputs: OpenedInputs | undefined;
  try {
    inputs = await openInputs(references, sources);
    await compute(inputs, tree, target.workPath);
    await target.publish();
  } catch (error) {
    await target.discard();
    throw error;
  } finally {
    inputs?.close();
  }
}
