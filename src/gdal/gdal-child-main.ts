/**
 * The entry point of a GDAL worker process (`gdal-child.ts` starts it): it lowers its priority
 * before GDAL is loaded, so that starting a worker ahead of its task (0.2 to 0.3 s of CPU, most of
 * it loading GDAL) comes after the API's answers when the cores are busy, then runs the task
 * runner.
 */
import { BACKGROUND_NICENESS, setNiceness } from '../runtime/niceness.js';

setNiceness(BACKGROUND_NICENESS);
await import('./gdal-task-runner.js');
