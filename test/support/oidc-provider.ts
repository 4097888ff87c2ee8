/**
 * A real OpenID provider for the tests (the `oidc-provider` package) on a loopback port chosen at
 * run time: JWT access tokens for one resource server (resource indicators), carrying the
 * account's or the machine client's roles in `realm_access.roles`. Machines get tokens by the
 * client credentials grant (through `openid-client`); people log in through the provider's own
 * login and consent pages (the console's public client, authorization code with PKCE). Its signing
 * keys can be rotated while it runs.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';

import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type Configuration } from 'oidc-provider';
import * as client from 'openid-client';

import { type OidcSettings } from '../../src/config.js';

/** The resource server the tokens are for: Steward's API, as its STEWARD_OIDC_AUDIENCE. */
export const AUDIENCE = 'https://steward.test/api';
/** The console's public client. */
export const CONSOLE_CLIENT = 'steward-console';
export const ROLES_CLAIM = 'realm_access.roles';
const SECRET = 'the machine clients secret of the tests';

export interface TestProviderOptions {
  /** Machine clients (client credentials grant) and the roles their tokens carry. */
  machines: Record<string, string[]>;
  /** People who log in through the login page (any password) and their roles. */
  people?: Record<string, string[]>;
  /** Where the console's client may be sent back to. */
  redirectUris?: string[];
  /** Seconds the access tokens of a machine live (300 by default). */
  lifetimes?: Record<string, number>;
  /** The signing keys (the first signs); new ones when not given. */
  keys?: JWK[];
}

export interface TestProvider {
  issuer: string;
  /** The private signing keys, newest first. */
  keys: JWK[];
  /** An access token of a machine client, for `resource` (the API by default). */
  token(machine: string, resource?: string): Promise<string>;
  /** Lets the console's client be sent back to `uri` from now on. */
  allowRedirect(uri: string): void;
  /** Signs with a new key from now on, the old one still published. */
  rotateKeys(): Promise<void>;
  stop(): Promise<void>;
}

/** Steward's settings for `provider`: its JWTs for the API, roles in ROLES_CLAIM, the console's client. */
export function stewardSettings(provider: TestProvider): OidcSettings {
  return {
    issuer: provider.issuer,
    audience: AUDIENCE,
    rolesClaim: ROLES_CLAIM,
    nameClaim: undefined,
    clientId: CONSOLE_CLIENT,
    scope: 'openid profile',
  };
}

export async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return {
    ...(await exportJWK(privateKey)),
    kid: `key-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    alg: 'RS256',
    use: 'sig',
  };
}

function configuration(options: TestProviderOptions, keys: JWK[]): Configuration {
  const rolesOf = (id: string | undefined): string[] =>
    (id !== undefined && (options.people?.[id] ?? options.machines[id])) || [];
  return {
    clients: [
      ...Object.keys(options.machines).map((id) => ({
        client_id: id,
        client_secret: SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      })),
      {
        client_id: CONSOLE_CLIENT,
        token_endpoint_auth_method: 'none' as const,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: options.redirectUris ?? ['http://127.0.0.1/unused'],
      },
    ],
    jwks: { keys },
    pkce: { required: () => true },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, preferred_username: id }),
    }),
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource, oidcClient) => ({
          scope: 'openid profile',
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: options.lifetimes?.[oidcClient.clientId] ?? 300,
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      const account = 'accountId' in token ? token.accountId : undefined;
      const id = account ?? token.clientId;
      return { realm_access: { roles: rolesOf(id) }, ...(account === undefined && { preferred_username: id }) };
    },
  };
}

/** Starts the provider; `issuer` is its URL, ending without a slash. */
export async function startTestProvider(options: TestProviderOptions): Promise<TestProvider> {
  let handler: (request: IncomingMessage, response: ServerResponse) => unknown = (_request, response) =>
    response.writeHead(503).end();
  const server: Server = createServer((request, response) => void handler(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const keys = options.keys ?? [await newSigningKey()];
  const serve = (): void => {
    const provider = new Provider(issuer, configuration(options, keys));
    handler = provider.callback();
  };
  serve();
  return {
    issuer,
    keys,
    async token(machine, resource = AUDIENCE) {
      const config = await client.discovery(new URL(issuer), machine, SECRET, undefined, {
        execute: [client.allowInsecureRequests],
      });
      const tokens = await client.clientCredentialsGrant(config, { resource });
      return tokens.access_token;
    },
    allowRedirect(uri) {
      options.redirectUris = [...(options.redirectUris ?? []), uri];
      serve();
    },
    async rotateKeys() {
      keys.unshift(await newSigningKey());
      serve();
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
