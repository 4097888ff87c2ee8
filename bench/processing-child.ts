/**
 * One raster processing job in a process of its own, as the service runs it, so the bench can
 * measure its peak memory. `calc <a> <b> <output>` or `hist <raster>`; prints
 * {"ms": <time of the job itself>}. Like the API, which keeps a worker process ready after its
 * first task, the job starts once one is.
 */
import { calculateRaster } from '../src/gdal/calculator/calculate.js';
import { parseExpression } from '../src/gdal/calculator/parser.js';
import { keepWorkerReady, stopWorkerReady } from '../src/gdal/gdal-child.js';
import { configureGdalMemory } from '../src/gdal/gdal-memory.js';
import { histogramOffLoop } from '../src/gdal/histogram.js';

export const NORMALISED_DIFFERENCE = '("a@1" - "b@1") / ("a@1" + "b@1")';

configureGdalMemory();
const [job, ...paths] = process.argv.slice(2);
await keepWorkerReady();
const start = performance.now();
if (job === 'calc') {
  const [a = '', b = '', output = ''] = paths;
  await calculateRaster(
    parseExpression(NORMALISED_DIFFERENCE),
    new Map([
      ['a', a],
      ['b', b],
    ]),
    output,
    undefined,
    { overwrite: true },
  );
} else if (job === 'hist') {
  await histogramOffLoop(paths[0] ?? '');
} else {
  throw new Error(`unknown job ${job}`);
}
const ms = performance.now() - start;
stopWorkerReady();
process.stdout.write(`${JSON.stringify({ ms })}\n`);
