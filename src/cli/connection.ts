/**
 * Which server the `steward` commands ask, and with which token: STEWARD_SERVER_URL and
 * STEWARD_API_TOKEN when set, else the server logged in to last and the token `steward login`
 * kept for it (credentials.ts).
 */
import { CliError, serverUrl, StewardApi } from './api.js';
import { type Credentials, readCredentials } from './credentials.js';

/** The server STEWARD_SERVER_URL names, else the one logged in to last; undefined for none. */
export function chosenServer(env: NodeJS.ProcessEnv, credentials: () => Credentials): URL | undefined {
  const named = env['STEWARD_SERVER_URL'];
  if (named) return serverUrl(named, 'STEWARD_SERVER_URL');
  const current = credentials().current;
  return current === undefined ? undefined : serverUrl(current, 'the server logged in to');
}

/** The API the environment and the kept credentials point at; the credentials are read only when needed. */
export function connect(env: NodeJS.ProcessEnv): StewardApi {
  let kept: Credentials | undefined;
  const credentials = (): Credentials => (kept ??= readCredentials(env));
  const server = chosenServer(env, credentials);
  if (!server)
    throw new CliError(
      'STEWARD_SERVER_URL is not set: point it at the Steward API, e.g. http://localhost:5000, or run steward login URL',
    );
  const token = env['STEWARD_API_TOKEN'] || credentials().servers[server.href]?.token;
  return StewardApi.at(server, token);
}
