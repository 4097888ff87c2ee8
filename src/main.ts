#!/usr/bin/env node
import { startServer } from './app/server.js';
import { ConfigError, loadConfig } from './config.js';

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
