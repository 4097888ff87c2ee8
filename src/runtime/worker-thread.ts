/**
 * Worker threads on a module of the checkout, compiled (.js) or run from the sources through tsx
 * (.ts), as the module that starts them is.
 */
import { extname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** The module `name` (`compute-thread`) beside the module whose `import.meta.url` is `beside`, in its form. */
export function siblingModule(beside: string, name: string): string {
  const here = fileURLToPath(beside);
  return here.replace(/[^/]+\.[cm]?[jt]s$/, `${name}${extname(here)}`);
}

/**
 * Starts a thread on the module `path` with `workerData`. From the sources, the thread registers
 * tsx first: Node 20 carries neither `--import tsx` nor its hooks into worker threads.
 */
export function startThread(path: string, workerData: unknown): Worker {
  if (extname(path) !== '.ts') return new Worker(path, { workerData });
  const [tsx, main] = [import.meta.resolve('tsx/esm/api'), pathToFileURL(path).href].map((url) => JSON.stringify(url));
  const bootstrap = `import(${tsx}).then((api) => { api.register(); return import(${main}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}
