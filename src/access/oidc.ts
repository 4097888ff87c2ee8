/**
 * OpenID Connect: bearer JWTs (access tokens, or ID tokens) verified against the issuer's keys
 * (docs/access.md, "OpenID Connect"). The keys' address comes from the issuer's discovery
 * document; `jose` fetches the key set, and fetches it again when a token names a key it lacks
 * (the issuer rotated its keys). A verified token is kept, by a SHA-256 of it, until it expires,
 * so that a request with it pays a hash and a map lookup.
 */
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';

import { type OidcSettings } from '../config.js';
import { RetryLater } from '../errors.js';
import { quickDigest } from './token-secret.js';

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
  private discovering: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
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
    if (this.keys) return this.keys;
    if (this.now() - this.failedAt < DISCOVERY_RETRY_MS)
      throw new IssuerUnavailable('its discovery document could not be read a moment ago');
    this.discovering ??= this.discover().finally(() => {
      this.discovering = undefined;
    });
    try {
      this.keys = await this.discovering;
    } catch (error) {
      this.failedAt = this.now();
      throw new IssuerUnavailable((error as Error).message);
    }
    return this.keys;
  }

  private async discover(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const url = `${this.settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (document.issuer !== this.settings.issuer)
      throw new Error(`${url} names the issuer ${JSON.stringify(document.issuer)}, not ${this.settings.issuer}`);
    if (typeof document.jwks_uri !== 'string') throw new Error(`${url} has no jwks_uri`);
    return createRemoteJWKSet(new URL(document.jwks_uri), {
      cooldownDuration: JWKS_COOLDOWN_MS,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
  }
}
