/**
 * Loaded before a test file (`node --import`) to run it as on a machine where the addons of
 * native/ were not built: each fails to load, as a missing one does, and the storage code takes
 * its other path. scripts/run-tests.mjs runs the storage tests both ways.
 */
const dlopen = process.dlopen.bind(process);

process.dlopen = (module: { exports: unknown }, filename: string, ...rest: number[]): void => {
  if (/\/native\/build\/[^/]+\.node$/.test(filename)) throw new Error(`${filename}: left out by the test`);
  dlopen(module, filename, ...rest);
};
