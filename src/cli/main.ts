#!/usr/bin/env node
/** The `steward` command: manages QGIS Server instances through the Steward API. */
import { run } from './run.js';
import { readSecret } from './secret-input.js';

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());

process.exitCode = await run(process.argv.slice(2), {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  env: process.env,
  isTTY: process.stdout.isTTY === true,
  signal: stop.signal,
  readSecret: (prompt) => readSecret(prompt),
});
