import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { childEnvironment } from '../config.js';

const run = promisify(execFile);

/** The version of the local QGIS Server (`3.22.16`), or undefined when it is not installed here. */
export async function localQgisVersion(): Promise<string | undefined> {
  try {
    const { stdout, stderr } = await run('qgis_mapserver', ['--version'], {
      env: childEnvironment({ QT_QPA_PLATFORM: 'offscreen' }),
      timeout: 20_000,
    });
    return /QGIS (\d+\.\d+(?:\.\d+)?)/.exec(stdout + stderr)?.[1];
  } catch {
    return undefined;
  }
}
