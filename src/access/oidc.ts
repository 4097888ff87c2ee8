/**
 * OpenID Connect: bearer JWTs (access tokens, or ID tokens) verified against the issuer's keys
 * (docs/access.md, "OpenID Connect"). The keys' address comes from the issuer's discovery
 * document; `jose` fetches the key set, and fetches it again when a token names a key it lacks
 * (the issuer rotated its keys). A verified token is kept, by a SHA-256 of it, until it expires,
 * so that a request with it pays a hash and a map lookup.
 */
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';

import { type OidcSettings } from '../config.js';
import { RetryLater, Unauthorized } from '../errors.js';
import { quickDigest } from './token-secret.js';

/** What the issuer's discovery document says that Steward uses. */
export interface ProviderEndpoints {
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

/** What the console's login is answered. */
export interface LoginTokens {
  access_token: string;
  expires_in: number | null;
}

/** Who a verified token names, and until when. */
export interface OidcClaims {
  name: string;
  roles: string[];
  /** Milliseconds since the epoch: the token's `exp`. */
  expiresAt: number;
}

/** Seconds of difference between the issuer's clock and ours taken for `exp`, `nbf` and `iat`. */
const CLOCK_TOLERANCE_S = 5;
/** After one fetch of the key set, another is made no sooner than this (a token naming an unknown key). */
const JWKS_COOLDOWN_MS = 5_000;
/** The longest a fetch of the discovery document or the key set may take. */
const FETCH_TIMEOUT_MS = 5_000;
/** A failed discovery is tried again no sooner than this. */
const DISCOVERY_RETRY_MS = 5_000;
/** Verified tokens kept at most; past that the oldest are forgotten (and verified again if presented). */
const MAX_KEPT = 10_000;
const MAX_ROLES = 100;

/** The claims' JOSE errors that say the token is wrong, as against the issuer unreachable. */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  errors.JOSEError.code,
  errors.JWKSTimeout.code,
  errors.JWKSInvalid.code,
]);

/** Whether `token` has a JWT's shape (three base64url parts): API tokens never have it. */
export function isJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/** The value at a dotted path of the payload (`realm_access.roles`), or the member of that very name. */
export function claimAt(payload: JWTPayload, path: string): unknown {
  if (path in payload) return payload[path];
  let value: unknown = payload;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The roles a claim names: an array of strings, or one string of names separated by spaces. */
export function rolesOf(value: unknown): string[] {
  const names = typeof value === 'string' ? value.split(/\s+/) : Array.isArray(value) ? value : [];
  const roles = names.filter((name): name is string => typeof name === 'string' && name !== '');
  return [...new Set(roles)].slice(0, MAX_ROLES);
}

function nameOf(payload: JWTPayload, nameClaim: string | undefined): string | undefined {
  const candidates = nameClaim === undefined ? ['preferred_username', 'sub'] : [nameClaim];
  for (const claim of candidates) {
    const value = claimAt(payload, claim);
    if (typeof value === 'string' && value !== '') return value.slice(0, 200);
  }
  return undefined;
}

class IssuerUnavailable extends RetryLater {
  constructor(why: string) {
    super(503, `the OpenID provider cannot be reached to verify the token: ${why}`, 5);
  }
}

/** Verifies bearer JWTs of one issuer for one audience, and keeps those verified until they expire. */
export class OidcVerifier {
  private keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  private endpoints: ProviderEndpoints | undefined;
  private discovering: Promise<ProviderEndpoints> | undefined;
  private failedAt = -Infinity;
  private readonly kept = new Map<string, OidcClaims>();

  constructor(
    readonly settings: OidcSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** The claims of a token verified before and not expired; undefined otherwise. */
  known(token: string): OidcClaims | undefined {
    const key = quickDigest(token).toString('base64');
    const claims = this.kept.get(key);
    if (claims === undefined) return undefined;
    if (claims.expiresAt > this.now()) return claims;
    this.kept.delete(key);
    return undefined;
  }

  /**
   * The claims of a token signed by the issuer for the audience and not expired; undefined for any
   * other. Throws 503 (RetryLater) when the issuer's discovery document or keys cannot be had.
   */
  async verify(token: string): Promise<OidcClaims | undefined> {
    const known = this.known(token);
    if (known) return known;
    const keys = await this.keySet();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError && !UNAVAILABLE_CODES.has(error.code)) return undefined;
      throw new IssuerUnavailable((error as Error).message);
    }
    const name = nameOf(payload, this.settings.nameClaim);
    if (name === undefined) return undefined;
    const claims = {
      name,
      roles: rolesOf(claimAt(payload, this.settings.rolesClaim)),
      expiresAt: (payload.exp ?? 0) * 1000,
    };
    this.keep(quickDigest(token).toString('base64'), claims);
    return claims;
  }

  private keep(key: string, claims: OidcClaims): void {
    if (this.kept.size >= MAX_KEPT) {
      const now = this.now();
      for (const [old, { expiresAt }] of this.kept) if (expiresAt <= now) this.kept.delete(old);
      const oldest = this.kept.keys().next();
      if (this.kept.size >= MAX_KEPT && !oldest.done) this.kept.delete(oldest.value);
    }
    this.kept.set(key, claims);
  }

  /** The issuer's key set, found through its discovery document on first use. */
  private async keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    this.keys ??= createRemoteJWKSet(new URL((await this.provider()).jwks_uri), {
      cooldownDuration: JWKS_COOLDOWN_MS,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
    return this.keys;
  }

  /** The issuer's endpoints, from its discovery document read on first use; 503 when it cannot be. */
  async provider(): Promise<ProviderEndpoints> {
    if (this.endpoints) return this.endpoints;
    if (this.now() - this.failedAt < DISCOVERY_RETRY_MS)
      throw new IssuerUnavailable('its discovery document could not be read a moment ago');
    this.discovering ??= this.discover().finally(() => {
      this.discovering = undefined;
    });
    try {
      this.endpoints = await this.discovering;
    } catch (error) {
      this.failedAt = this.now();
      throw new IssuerUnavailable((error as Error).message);
    }
    return this.endpoints;
  }

  private async discover(): Promise<ProviderEndpoints> {
    const url = `${this.settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    const document = (await response.json()) as Record<string, unknown>;
    if (document['issuer'] !== this.settings.issuer)
      throw new Error(`${url} names the issuer ${JSON.stringify(document['issuer'])}, not ${this.settings.issuer}`);
    const endpoints = ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const;
    for (const name of endpoints) {
      const value = document[name];
      if (typeof value !== 'string' || !URL.canParse(value)) throw new Error(`${url} has no ${name}`);
    }
    return Object.fromEntries(endpoints.map((name) => [name, document[name]])) as unknown as ProviderEndpoints;
  }

  /**
   * The console's login (docs/access.md): exchanges an authorization code, with its PKCE verifier,
   * at the token endpoint for the console's public client. Through the API, as the console's
   * pages may fetch nothing but their own origin. The access token is asked for the audience as a
   * resource indicator when the audience is a URL.
   */
  async exchangeCode(request: { code: string; code_verifier: string; redirect_uri: string }): Promise<LoginTokens> {
    const { token_endpoint } = await this.provider();
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: this.settings.clientId ?? '',
      ...request,
    });
    if (URL.canParse(this.settings.audience)) form.set('resource', this.settings.audience);
    let response: Response;
    try {
      response = await fetch(token_endpoint, {
        method: 'POST',
        body: form,
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
    } catch (error) {
      throw new IssuerUnavailable((error as Error).message);
    }
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    const token = answer['access_token'];
    if (!response.ok || typeof token !== 'string') {
      const why = [answer['error_description'], answer['error']].find((text) => typeof text === 'string');
      throw new Unauthorized(`the OpenID provider refused the login: ${(why ?? `${response.status}`).slice(0, 300)}`);
    }
    if (!(await this.verify(token)))
      throw new Unauthorized('the OpenID provider gave an access token this API does not take (check the audience)');
    return { access_token: token, expires_in: typeof answer['expires_in'] === 'number' ? answer['expires_in'] : null };
  }
}
