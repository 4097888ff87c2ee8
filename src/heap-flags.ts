#!/usr/bin/env node
/**
 * Prints the Node flag that bounds the heap as the settings ask (STEWARD_HEAP_MB), or nothing for
 * Node's own bound, for scripts/bounded-node.sh to start an entry point with.
 */
import { ConfigError, heapBoundMb } from './config.js';
import { heapFlag } from './runtime/heap-bound.js';

try {
  process.stdout.write(heapFlag(heapBoundMb(process.env)));
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`steward: ${error.message}`);
  process.exit(2);
}
