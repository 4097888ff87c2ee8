import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const SCRIPTS = join(import.meta.dirname, 'pyqgis');

/**
 * A QGIS release the oracle tests run against: how to start its Python with PyQGIS and its
 * QGIS Server. The machine's own QGIS is the default; another release (a chroot root, say) plugs
 * in by giving other commands.
 */
export interface QgisRuntime {
  name: string;
  /** The program and arguments that run a PyQGIS script with its arguments. */
  python(script: string, args: readonly string[]): { command: string; args: string[] };
  /** The program and first arguments of `qgis_mapserver`, the listen address following them. */
  mapserver: readonly string[];
}

export const SYSTEM_QGIS: QgisRuntime = {
  name: 'system QGIS',
  python: (script, args) => ({ command: '/usr/bin/python3', args: [script, ...args] }),
  mapserver: ['qgis_mapserver'],
};

/** Runs a script of `test/support/pyqgis` with the runtime's PyQGIS and returns what it printed. */
export function runPyqgis(runtime: QgisRuntime, script: string, ...args: string[]): string {
  const { command, args: commandArgs } = runtime.python(join(SCRIPTS, script), args);
  return execFileSync(command, commandArgs, {
    env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
}
