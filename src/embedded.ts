#!/usr/bin/env node
/**
 * `npm start`: the embedded default. Starts what the environment does not point elsewhere (a
 * loopback QGIS Server, a projects folder in the checkout), then the API, and says where each listens.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from './config.js';
import { QgisServerProcess } from './runtime/qgis-server.js';
import { startServer } from './server.js';

const checkout = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

async function main(): Promise<void> {
  const env = { ...process.env };
  const stops: Array<() => Promise<void>> = [];
  env['STEWARD_QGISSERVER_PROJECTS_DIR'] ??= join(checkout, 'data', 'projects');
  mkdirSync(env['STEWARD_QGISSERVER_PROJECTS_DIR'], { recursive: true });
  if (!env['STEWARD_QGISSERVER_URL']) {
    const qgis = await QgisServerProcess.start();
    stops.push(() => qgis.stop());
    env['STEWARD_QGISSERVER_URL'] = qgis.url;
    console.log(`QGIS Server   ${qgis.url}`);
  }
  const server = await startServer(loadConfig(env));
  stops.unshift(() => server.close());
  console.log(`Steward API   ${server.url}/api/projects`);
  console.log(`API reference ${server.url}/docs`);
  console.log(`Projects      ${env['STEWARD_QGISSERVER_PROJECTS_DIR']}`);
  const stop = async (): Promise<void> => {
    for (const step of stops) await step().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  console.error(`steward: ${error instanceof ConfigError ? error.message : String(error)}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
