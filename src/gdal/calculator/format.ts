/**
 * How the calculator's output tiles are stored: a module of its own because the worker process's
 * task names it too (`gdal-child.ts`), and output.ts depends on what depends on that.
 */
export type OutputFormat = 'uncompressed' | 'zstd';
