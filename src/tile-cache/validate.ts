import { execFile } from 'node:child_process';

import { childEnvironment } from '../config.js';
import { fileVersion } from '../storage/file-version.js';

/** The Python that has MapProxy: Debian's (`mapproxy-util` runs with it), not a PATH python3. */
export const MAPPROXY_PYTHON = '/usr/bin/python3';
const TIMEOUT_MS = 30_000;

export interface Validation {
  valid: boolean;
  /** Why MapProxy refused the configuration. */
  reason?: string;
}

// Loads the file as MapProxy does before serving it (options checked strictly, every service
// built) and prints what went wrong, collecting MapProxy's own warnings as the explanation.
const LOADER = `
import json, logging, sys
problems = []
class Collect(logging.Handler):
    def emit(self, record):
        problems.append(record.getMessage())
logger = logging.getLogger('mapproxy')
logger.addHandler(Collect(logging.WARNING))
logger.propagate = False
try:
    from mapproxy.config.loader import load_configuration
    load_configuration(sys.argv[1], ignore_warnings=False).configured_services()
    ok = True
except Exception as error:
    ok = False
    problems.append(' '.join(str(error).split()) or type(error).__name__)
print(json.dumps({'ok': ok, 'problems': problems}))
`;

function run(file: string, env: Readonly<Record<string, string>>): Promise<{ ok: boolean; problems: string[] }> {
  return new Promise((resolve, reject) => {
    execFile(
      MAPPROXY_PYTHON,
      ['-c', LOADER, file],
      { env: childEnvironment(env), timeout: TIMEOUT_MS },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new Error(
              error.killed ? `it did not finish within ${TIMEOUT_MS / 1000} s` : `${error.message} ${stderr}`.trim(),
            ),
          );
          return;
        }
        try {
          resolve(JSON.parse(stdout) as { ok: boolean; problems: string[] });
        } catch {
          reject(new Error(`unexpected output: ${stdout.slice(0, 200)}`));
        }
      },
    );
  });
}

/** MapProxy's verdict on each configuration file, until the file changes: its loader takes a Python start. */
const verdicts = new Map<string, { version: string; validation: Validation }>();

/** Whether MapProxy loads the configuration file, and if not, its reasons; `env` holds its S3 settings. */
export async function validateWithMapProxy(file: string, env: Readonly<Record<string, string>>): Promise<Validation> {
  const version = fileVersion(file);
  const known = verdicts.get(file);
  if (version !== undefined && known?.version === version) return known.validation;
  let result;
  try {
    result = await run(file, env);
  } catch (error) {
    return { valid: false, reason: `MapProxy's loader could not check ${file}: ${(error as Error).message}` };
  }
  const validation = result.ok
    ? { valid: true }
    : { valid: false, reason: `MapProxy cannot load ${file}: ${result.problems.join('; ')}` };
  if (version !== undefined) verdicts.set(file, { version, validation });
  return validation;
}
