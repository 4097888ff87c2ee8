#!/usr/bin/env node
/**
 * Prints the Node flags that bound the heap as the settings ask (STEWARD_HEAP_MB), or nothing for
 * Node's own heap, for scripts/bounded-node.sh to start an entry point with.
 */
import { ConfigError, heapBoundMb } from './config.js';
import { heapFlags } from './runtime/heap-bound.js';

try {
  process.stdout.write(heapFlags(heapBoundMb(process.env)).join(' '));
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`steward: ${error.message}`);
  process.exit(2);
}
