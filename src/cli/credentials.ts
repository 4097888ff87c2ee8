/**
 * The tokens `steward login` keeps, by server URL, in `credentials.json` of the user's config
 * folder (`$XDG_CONFIG_HOME/steward`, else `~/.config/steward`; `%APPDATA%\steward` on Windows),
 * readable by the user alone (mode 0600 in a folder of mode 0700). The server logged in to last is
 * the one the commands use when STEWARD_SERVER_URL is not set.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

import { CliError } from './api.js';

export interface Login {
  token: string;
  /** The identity's name when the token was stored. */
  name: string;
}

export interface Credentials {
  /** The URL of the server logged in to last. */
  current?: string;
  /** By server URL, with its trailing `/`. */
  servers: Record<string, Login>;
}

/** Where the credentials are kept, from the environment the command runs in. */
export function credentialsPath(env: NodeJS.ProcessEnv): string {
  const config =
    env['XDG_CONFIG_HOME'] ||
    (process.platform === 'win32' && env['APPDATA']) ||
    join(env['HOME'] || homedir(), '.config');
  return join(config, 'steward', 'credentials.json');
}

function isCredentials(value: unknown): value is Credentials {
  if (typeof value !== 'object' || value === null) return false;
  const { current, servers } = value as Record<string, unknown>;
  return (
    (current === undefined || typeof current === 'string') &&
    typeof servers === 'object' &&
    servers !== null &&
    Object.values(servers).every((login: unknown) => typeof (login as Partial<Login> | null)?.token === 'string')
  );
}

/** The credentials kept; none when the file does not exist. Read at once: a command reads them before anything else. */
export function readCredentials(env: NodeJS.ProcessEnv): Credentials {
  const path = credentialsPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { servers: {} };
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!isCredentials(value)) throw new CliError(`${path} is not what steward login writes: remove it and log in again`);
  return value;
}

/** Writes the credentials whole: a file of mode 0600 renamed over the old one, so that none is ever half written. */
async function writeCredentials(env: NodeJS.ProcessEnv, credentials: Credentials): Promise<string> {
  const path = credentialsPath(env);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    // The mode given is masked by the umask; the file must be the user's alone whatever it is.
    await chmod(temporary, 0o600);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`);
  }
  return path;
}

/** Keeps the token of a server and makes it the current one; resolves to the file's path. */
export async function saveLogin(env: NodeJS.ProcessEnv, server: string, login: Login): Promise<string> {
  const credentials = readCredentials(env);
  return writeCredentials(env, { current: server, servers: { ...credentials.servers, [server]: login } });
}

/** Forgets the token of a server; false when none was kept. */
export async function forgetLogin(env: NodeJS.ProcessEnv, server: string): Promise<boolean> {
  const { current, servers } = readCredentials(env);
  if (!Object.hasOwn(servers, server)) return false;
  const { [server]: _forgotten, ...others } = servers;
  await writeCredentials(env, { ...(current !== server && current !== undefined && { current }), servers: others });
  return true;
}
