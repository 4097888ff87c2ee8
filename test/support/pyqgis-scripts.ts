import { runPyqgis, TEST_QGIS } from './qgis-runtime.js';

/** Runs one of the PyQGIS scripts of `test/support/pyqgis` with the tested release's PyQGIS. */
export function runPyqgisScript(script: string, ...args: string[]): string {
  return runPyqgis(TEST_QGIS, script, ...args);
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
