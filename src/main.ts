#!/usr/bin/env node
import { ConfigError, loadConfig } from './config.js';
import { startServer } from './server.js';

try {
  const server = await startServer(loadConfig());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void server.close().then(() => process.exit(0)));
  }
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`steward: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
