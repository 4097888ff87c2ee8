/**
 * The console's login through OpenID Connect (docs/access.md): the authorization code flow with
 * PKCE for a public client. The person is sent to the provider with a fresh verifier's challenge
 * and a state, both kept for the tab; the provider sends them back to /login/callback, whose code
 * the API exchanges at the provider (the console's pages fetch nothing but their own origin), and
 * the access token answered becomes the tab's bearer token.
 */
import { type Answer, api } from './client';
import { setToken } from './token';

type LoginConfig = NonNullable<Answer<'/api/auth/config'>['oidc']>;

const KEY = 'steward.oidc';
export const CALLBACK_PATH = '/login/callback';

interface Pending {
  state: string;
  verifier: string;
  back: string;
}

function randomText(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function redirectUri(): string {
  return `${location.origin}${CALLBACK_PATH}`;
}

/** Sends the person to the provider's login, to come back to the page shown now. */
export async function startLogin(config: LoginConfig): Promise<void> {
  const pending: Pending = {
    state: randomText(16),
    verifier: randomText(32),
    back: location.pathname + location.search,
  };
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier))),
  );
  sessionStorage.setItem(KEY, JSON.stringify(pending));
  const url = new URL(config.authorization_endpoint);
  const query = {
    response_type: 'code',
    client_id: config.client_id,
    redirect_uri: redirectUri(),
    scope: config.scope,
    state: pending.state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  if (URL.canParse(config.audience)) url.searchParams.set('resource', config.audience);
  location.assign(url.href);
}

/** Ends the login the provider sent the person back from: keeps the token, answers where to go. */
export async function finishLogin(query: URLSearchParams): Promise<string> {
  const pending = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Pending | null;
  sessionStorage.removeItem(KEY);
  const refused = query.get('error_description') ?? query.get('error');
  if (refused !== null) throw new Error(`The OpenID provider refused the login: ${refused}`);
  const code = query.get('code');
  if (pending === null || code === null || query.get('state') !== pending.state)
    throw new Error('This login was not started from this tab, or was already used. Log in again.');
  const tokens = await api.post('/api/auth/token', {
    body: { code, code_verifier: pending.verifier, redirect_uri: redirectUri() },
  });
  setToken(tokens.access_token);
  return pending.back.startsWith(CALLBACK_PATH) ? '/' : pending.back;
}
