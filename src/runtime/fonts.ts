import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The font families fontconfig knows on this machine, lower-cased: what QGIS (through Qt) can
 * draw labels with when it runs here. `fc-list` prints one font a line, its families comma-separated.
 */
export async function installedFontFamilies(): Promise<Set<string>> {
  const { stdout } = await run('fc-list', [':', 'family'], { maxBuffer: 16 * 1024 * 1024 });
  const families = new Set<string>();
  for (const line of stdout.split('\n')) {
    for (const family of line.split(',')) if (family.trim()) families.add(family.trim().toLowerCase());
  }
  return families;
}
