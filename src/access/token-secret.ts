/**
 * The API tokens' secrets: their format, and the slow hash they are stored under (scrypt).
 *
 * A token is `stw_<id>_<secret>`: `id` (16 hex digits) names the stored record, so that a request
 * is checked against one hash, not against every token; `secret` is 32 random bytes (base64url).
 */
import { createHash, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const PREFIX = 'stw_';
const TOKEN = /^stw_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** scrypt's cost: about 30 ms and 16 MiB a hash, paid once a token and cache period. */
const COST = { N: 16384, r: 8, p: 1 };
const KEY_BYTES = 32;
const SALT_BYTES = 16;

/**
 * The tile cache's token, derived from STEWARD_API_TOKEN so that every replica sends and accepts
 * the same one without storing it: MapProxy presents it to QGIS Server through nginx's check.
 */
export function tileCacheToken(bootstrap: string): string {
  return `stwc_${createHmac('sha256', bootstrap).update('steward tile cache').digest('base64url')}`;
}

/** A new token: its id and the whole secret string the client presents. */
export function newToken(): { id: string; token: string } {
  const id = randomBytes(8).toString('hex');
  return { id, token: `${PREFIX}${id}_${randomBytes(32).toString('base64url')}` };
}

/** The id a token names, or undefined when it is not of the format of ours. */
export function tokenId(token: string): string | undefined {
  return TOKEN.exec(token)?.[1];
}

/** Whether `id` may name a token (the format of newToken's ids). */
export function isTokenId(id: string): boolean {
  return /^[0-9a-f]{16}$/.test(id);
}

function derive(secret: string, salt: Buffer, cost: typeof COST): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, KEY_BYTES, { ...cost, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$<salt>$<key>`, the stored form of a secret. */
export async function hashSecret(token: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(token, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `token` is the secret `stored` (hashSecret's form) was made from; false for a malformed one. */
export async function verifySecret(token: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, key] = stored.split('$');
  if (kind !== 'scrypt' || salt === undefined || key === undefined) return false;
  const expected = Buffer.from(key, 'base64url');
  const derived = await derive(token, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return derived.length === expected.length && timingSafeEqual(derived, expected);
}

/** A fast digest of a presented token, for comparing with one verified before in constant time. */
export function quickDigest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
