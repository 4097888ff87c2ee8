import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const SCRIPTS = join(import.meta.dirname, 'pyqgis');

/** Runs one of the PyQGIS scripts of `test/support/pyqgis` and returns what it printed. */
export function runPyqgisScript(script: string, ...args: string[]): string {
  return execFileSync('/usr/bin/python3', [join(SCRIPTS, script), ...args], {
    env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A layer's active temporal properties as QGIS read them: its mode and range, UTC. */
export interface QgisTemporal {
  mode: number;
  begin: string;
  end: string;
}

export interface QgisReading {
  title: string;
  author: string;
  layers: Record<string, { valid: boolean; provider: string; temporal: QgisTemporal | null }>;
}

/** What QGIS's own reader finds in a project (a path or a `postgresql:?...` URI). */
export function readWithQgis(project: string): QgisReading {
  return JSON.parse(runPyqgisScript('read_project.py', project)) as QgisReading;
}
