/** `steward login` and `steward logout`: the token kept for a server (credentials.ts). */
import { CliError, HttpError, serverUrl, StewardApi } from './api.js';
import { type Invocation, type Io, type OwnServerCommand } from './command.js';
import { chosenServer } from './connection.js';
import { forgetLogin, readCredentials, saveLogin } from './credentials.js';

/** The server named on the command line, else STEWARD_SERVER_URL's, else the one logged in to last. */
function serverOf(command: string, { ids: [url] }: Invocation, io: Io): URL {
  const server = url ? serverUrl(url, 'the server URL') : chosenServer(io.env, () => readCredentials(io.env));
  if (!server)
    throw new CliError(`steward ${command}: give the server's URL, e.g. steward ${command} http://localhost:5000`);
  return server;
}

export const login: OwnServerCommand = {
  ownServer: true,
  summary: 'Keep a token for a server, checked with it, for the commands run without STEWARD_API_TOKEN',
  arguments: ['[server_url]'],
  options: {},
  valueOptions: {
    token: 'the token (default: read from stdin, hidden on a terminal; a command line is seen by others)',
  },
  async run(invocation, io) {
    const server = serverOf('login', invocation, io);
    const token = (invocation.values['token'] ?? (await io.readSecret(`Token for ${server.href}: `))).trim();
    if (token === '') throw new CliError('steward login: no token given');
    const me = await StewardApi.at(server, token)
      .whoami()
      .catch((error: unknown) => {
        if (error instanceof HttpError && error.status === 401)
          throw new CliError(`${server.href} refused the token, which is not kept: ${error.message}`);
        throw error;
      });
    const path = await saveLogin(io.env, server.href, { token, name: me.name });
    const roles = me.admin ? 'an administrator' : `roles: ${me.roles.join(', ') || 'none'}`;
    io.out(`Logged in to ${server.href} as ${me.name} (${roles}); the token is kept in ${path}.\n`);
    if (me.name === 'anyone' && me.admin && me.roles.length === 0)
      io.err('The server checks no token: access control is off until it is started with STEWARD_API_TOKEN.\n');
    if (io.env['STEWARD_API_TOKEN'])
      io.err('STEWARD_API_TOKEN is set: the commands send it rather than the kept token until it is unset.\n');
  },
};

export const logout: OwnServerCommand = {
  ownServer: true,
  summary: 'Forget the token kept for a server (it stays valid: steward tokens revoke ends it)',
  arguments: ['[server_url]'],
  options: {},
  async run(invocation, io) {
    const server = serverOf('logout', invocation, io);
    const forgotten = await forgetLogin(io.env, server.href);
    io.out(forgotten ? `Forgot the token kept for ${server.href}.\n` : `No token was kept for ${server.href}.\n`);
  },
};
