import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { FCGI_PROGRAM } from '../../src/runtime/qgis-fcgi-pool.js';
import { type QgisServerOptions, QgisServerProcess } from '../../src/runtime/qgis-server.js';

const SCRIPTS = join(import.meta.dirname, 'pyqgis');
const IN_ROOT = join(import.meta.dirname, '..', '..', 'scripts', 'in-root.sh');

/**
 * A QGIS release the tests run against: how to start its Python with PyQGIS, its QGIS Server and
 * its MapProxy. The machine's own QGIS is the default; another release (a chroot root, say) plugs
 * in by giving other commands.
 */
export interface QgisRuntime {
  name: string;
  /** major.minor, as Steward's STEWARD_QGISSERVER_VERSION takes it. */
  version: string;
  /** The program and arguments that run a PyQGIS script with its arguments. */
  python(script: string, args: readonly string[]): { command: string; args: string[] };
  /** The program and first arguments of `qgis_mapserver`, the listen address following them. */
  mapserver: readonly string[];
  /** The program and first arguments of `qgis_mapserv.fcgi`, as spawn-fcgi starts it. */
  mapservFcgi: readonly string[];
  /** The program and first arguments of `mapproxy-util`. */
  mapproxyUtil: readonly string[];
}

export const SYSTEM_QGIS: QgisRuntime = {
  name: 'system QGIS',
  version: '3.22',
  python: (script, args) => ({ command: '/usr/bin/python3', args: [script, ...args] }),
  mapserver: ['qgis_mapserver'],
  mapservFcgi: [FCGI_PROGRAM],
  mapproxyUtil: ['mapproxy-util'],
};

/** The releases held in Debian trixie roots made by scripts/qgis-roots.sh. */
export const ROOT_VERSIONS = ['3.40', '3.44'] as const;

/** QGIS of a trixie root, run with scripts/in-root.sh (chroot in a private mount namespace). */
export function rootRuntime(version: (typeof ROOT_VERSIONS)[number]): QgisRuntime {
  const root = join(process.env['STEWARD_ROOTS'] ?? '/var/lib/steward/roots', `trixie-${version}`);
  const inRoot = (program: string) => [IN_ROOT, root, '--', program];
  return {
    name: `QGIS ${version} (trixie root)`,
    version,
    python: (script, args) => ({ command: IN_ROOT, args: [root, '--', '/usr/bin/python3', script, ...args] }),
    mapserver: inRoot('qgis_mapserver'),
    mapservFcgi: inRoot(FCGI_PROGRAM),
    mapproxyUtil: inRoot('mapproxy-util'),
  };
}

/**
 * The QGIS the version-dependent tests run against: STEWARD_TEST_QGIS (`3.40`, `3.44`) names a
 * root's release; unset or `3.22`, the machine's own.
 */
function selectedRuntime(): QgisRuntime {
  const wanted = process.env['STEWARD_TEST_QGIS'];
  if (wanted === undefined || wanted === '' || wanted === SYSTEM_QGIS.version) return SYSTEM_QGIS;
  const version = ROOT_VERSIONS.find((known) => known === wanted);
  if (version === undefined) throw new Error(`STEWARD_TEST_QGIS must be 3.22, 3.40 or 3.44, not "${wanted}"`);
  return rootRuntime(version);
}

export const TEST_QGIS: QgisRuntime = selectedRuntime();

/**
 * Environment of a QGIS Server logging at level 0, each request's parameters included, for tests
 * that read what it logged (Steward runs it at level 1 by default).
 */
export const INFO_LOG_LEVEL = { QGIS_SERVER_LOG_LEVEL: '0' } as const;

/** Starts the QGIS Server of the tested release (TEST_QGIS). */
export function startTestQgis(options: QgisServerOptions = {}): Promise<QgisServerProcess> {
  return QgisServerProcess.start({ command: TEST_QGIS.mapserver, ...options });
}

/**
 * Runs a script of `test/support/pyqgis` with the runtime's PyQGIS off the event loop (for scripts
 * that ask servers of this process) and returns what it printed.
 */
export async function runPyqgisAsync(runtime: QgisRuntime, script: string, ...args: string[]): Promise<string> {
  const { command, args: commandArgs } = runtime.python(join(SCRIPTS, script), args);
  const { stdout } = await promisify(execFile)(command, commandArgs, {
    env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return stdout;
}

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
