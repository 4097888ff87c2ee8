#!/usr/bin/env node
import { ConfigError, heapBoundMb, loadConfig } from './config.js';
import { runBounded } from './runtime/heap-bound.js';

/** Imported only once the heap is bounded, so that a launcher stays small. */
async function serve(): Promise<void> {
  const config = loadConfig();
  const { startServer } = await import('./app/server.js');
  const server = await startServer(config);
  let closing: Promise<void> | undefined;
  const stop = (): void => {
    closing ??= server.close().then(() => process.exit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, stop);
}

try {
  const exitCode = await runBounded(heapBoundMb(process.env), process.env);
  if (exitCode === undefined) await serve();
  else process.exit(exitCode);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`steward: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
