import { timingSafeEqual } from 'node:crypto';

import { NotFound, Unprocessable } from '../errors.js';
import { checkName, checkText } from '../services/names.js';
import { isJwt, type OidcVerifier } from './oidc.js';
import { Permissions } from './permissions.js';
import {
  type AccessStore,
  type AuditEntry,
  type AuditFilter,
  OWS_SERVICES,
  type OwsService,
  type ProjectRule,
  type RoleDefinition,
  type TokenRecord,
} from './records.js';
import { hashSecret, newToken, quickDigest, tileCacheToken, tokenId, verifySecret } from './token-secret.js';

/**
 * How an identity was known: STEWARD_API_TOKEN, an API token, a JWT of the OpenID provider, no
 * token (the anonymous role), or the tile cache's token.
 */
export type IdentityKind = 'bootstrap' | 'token' | 'oidc' | 'anonymous' | 'tile-cache';

/** Who a request comes from, and what they may do. */
export interface Identity {
  kind: IdentityKind;
  name: string;
  roles: readonly string[];
  admin: boolean;
  /** The id of the API token presented; null for the other kinds. */
  token: string | null;
  permissions: Permissions;
}

/** A token as listed: never its secret nor its hash. */
export interface PublicToken {
  id: string;
  name: string;
  roles: string[];
  created: string;
  expires: string | null;
  expired: boolean;
}

export interface NewToken {
  name: string;
  roles: string[];
  expires?: string | null;
}

/** The role requests without a token take, when it is defined. */
export const ANONYMOUS_ROLE = 'anonymous';

/** Whether an identity is the anonymous role's, which requests without a token take. */
export function isAnonymous(identity: Identity): boolean {
  return identity.kind === 'anonymous';
}
/** The name STEWARD_API_TOKEN's requests are made under. */
export const BOOTSTRAP_NAME = 'bootstrap';
/** The name the tile cache's requests (MapProxy's, to QGIS Server) are made under. */
export const TILE_CACHE_NAME = 'tile-cache';

/** What MapProxy asks of QGIS Server: maps and legends through WMS. */
const TILE_CACHE_SERVICES: readonly OwsService[] = ['WMS', 'GetMap', 'GetLegendGraphic'];

/** MapProxy fills the cache from every layer of every project, through WMS only, and writes nothing. */
const TILE_CACHE_ROLE: RoleDefinition = {
  projects: { '*': { access: 'read' } },
  services: Object.fromEntries(
    OWS_SERVICES.filter((service) => !TILE_CACHE_SERVICES.includes(service)).map((service) => [service, false]),
  ),
};

const ROLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MAX_TOKEN_NAME = 200;
/**
 * How long after its last use a verified token is taken without its slow hash again: a client's
 * token in use is verified once, not every minute (scrypt's 30 ms of CPU on the thread pool).
 */
const VERIFIED_MS = 60_000;
/** Tokens and roles are read again at least this often, even without a change notified. */
const REFRESH_MS = 5_000;
/** Role sets whose permissions are kept; forgotten all at once past it (an OpenID provider's claims may hold any). */
const KEPT_ROLE_SETS = 10_000;

interface KnownToken {
  record: TokenRecord;
  expiresAt: number;
}

interface Verified {
  digest: Buffer;
  hash: string;
  until: number;
}

export interface AccessLog {
  warn(message: string): void;
  info(message: string): void;
}

export interface AccessOptions {
  log?: AccessLog;
  now?: () => number;
  /** The OpenID provider whose bearer JWTs are taken besides the API tokens. */
  oidc?: OidcVerifier | undefined;
}

function known(record: TokenRecord): KnownToken {
  return { record, expiresAt: record.expires === null ? Infinity : Date.parse(record.expires) };
}

/** The milliseconds of a date and time given as text; 422 when it is none. */
function timeOf(what: string, text: string): number {
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw new Unprocessable(`${what} "${text.slice(0, 80)}" is not a date and time`);
  return at;
}

function checkRoleName(name: string): string {
  if (!ROLE_NAME.test(name))
    throw new Unprocessable(
      `role name "${name.slice(0, 80)}" must be 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`,
    );
  return name;
}

/** A role's project key: `*`, `schema/*`, `schema/name` or `name`, each name one a project may have. */
function checkProjectKey(key: string): void {
  if (key === '*') return;
  const parts = key.split('/');
  if (parts.length > 2) throw new Unprocessable(`project key "${key.slice(0, 80)}" has more than one "/"`);
  const [first = '', second] = parts;
  if (second === undefined) {
    checkName('project', first);
    return;
  }
  checkName('schema', first);
  if (second !== '*') checkName('project', second);
}

function checkRule(key: string, rule: ProjectRule): void {
  checkProjectKey(key);
  for (const [layer, layerRule] of Object.entries(rule.layers ?? {})) {
    checkName('layer', layer);
    if (layerRule.filter !== undefined) checkText(`the filter of layer "${layer}"`, layerRule.filter);
  }
}

/**
 * Identities and what they may do: STEWARD_API_TOKEN (the bootstrap administrator), the API tokens
 * and roles kept in the store, the anonymous role, and the audit log (docs/access.md).
 *
 * Tokens and roles are held in memory and read again when the store says they changed (another
 * process: PostgreSQL's NOTIFY, inotify on the folder) and at least every 5 s. A token is verified
 * against its slow hash once, then by a SHA-256 of it compared in constant time until it goes
 * unused for a minute; a token revoked or expired is refused at once, whatever was verified.
 */
export class AccessService {
  private readonly bootstrap: Buffer | undefined;
  /** The token MapProxy presents to QGIS Server through nginx (tileCacheToken); undefined with access control off. */
  readonly tileCacheToken: string | undefined;
  private readonly tileCache: Buffer | undefined;
  private tokens = new Map<string, KnownToken>();
  private roleDefinitions = new Map<string, RoleDefinition>();
  /** Each role's definition as last read, in JSON: what tells a changed role from one read again. */
  private roleTexts = new Map<string, string>();
  private readonly verified = new Map<string, Verified>();
  /** By role set (the JSON of its names): the roles and what they grant together. */
  private readonly permissions = new Map<string, { roles: readonly string[]; permissions: Permissions }>();
  private loadedAt = 0;
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private watcher: { stop(): Promise<void> } | undefined;
  /** The audit entries under way, one after the other. */
  private recording = Promise.resolve();

  private readonly log: AccessLog;
  private readonly now: () => number;
  private readonly oidc: OidcVerifier | undefined;

  constructor(
    /** STEWARD_API_TOKEN; undefined when access control is off (tokens and roles are kept all the same). */
    bootstrapToken: string | undefined,
    private readonly store: AccessStore | undefined,
    options: AccessOptions = {},
  ) {
    this.log = options.log ?? { warn: () => undefined, info: () => undefined };
    this.now = options.now ?? Date.now;
    this.oidc = options.oidc;
    this.bootstrap = bootstrapToken === undefined ? undefined : quickDigest(bootstrapToken);
    this.tileCacheToken = bootstrapToken === undefined ? undefined : tileCacheToken(bootstrapToken);
    this.tileCache = this.tileCacheToken === undefined ? undefined : quickDigest(this.tileCacheToken);
  }

  /** The OpenID provider whose JWTs are taken, when there is one. */
  get openIdProvider(): OidcVerifier | undefined {
    return this.oidc;
  }

  /** Reads tokens and roles and follows their changes. */
  async start(): Promise<void> {
    if (!this.store) return;
    await this.refresh();
    this.watcher = await this.store.watch(() => void this.refresh());
  }

  async close(): Promise<void> {
    await this.watcher?.stop();
  }

  /** Reads tokens and roles again; calls made meanwhile make it read once more when done. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    const store = this.store;
    if (!store) return Promise.resolve();
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        const [tokens, roles] = await Promise.all([store.tokens(), store.roles()]);
        this.tokens = new Map(tokens.map((token) => [token.id, known(token)]));
        this.takeRoles(roles);
        this.loadedAt = this.now();
      } while (this.refreshAgain);
    })()
      .catch((error: unknown) => this.log.warn(`cannot read tokens and roles: ${(error as Error).message}`))
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /**
   * Takes the roles read, keeping the permissions of the role sets none of whose roles changed:
   * the rules compiled for QGIS Server are kept with them (ows-rules.ts), and the roles are read
   * again every 5 s, mostly unchanged.
   */
  private takeRoles(roles: Map<string, RoleDefinition>): void {
    const texts = new Map([...roles].map(([name, role]) => [name, JSON.stringify(role)]));
    const names = new Set([...this.roleTexts.keys(), ...texts.keys()]);
    const changed = new Set([...names].filter((name) => this.roleTexts.get(name) !== texts.get(name)));
    this.roleDefinitions = roles;
    this.roleTexts = texts;
    if (changed.size === 0) return;
    for (const [key, { roles: held }] of this.permissions) {
      if (held.some((role) => changed.has(role))) this.permissions.delete(key);
    }
  }

  private refreshWhenOld(): void {
    if (this.store && this.now() - this.loadedAt > REFRESH_MS) void this.refresh();
  }

  private permissionsOf(roles: readonly string[]): Permissions {
    // JSON, not the names joined: a role of an OpenID provider's claim may hold any character.
    const key = JSON.stringify(roles);
    const kept = this.permissions.get(key);
    if (kept) return kept.permissions;
    const definitions = roles.flatMap((role) => this.roleDefinitions.get(role) ?? []);
    const permissions = new Permissions(
      definitions.some((role) => role.admin === true),
      definitions,
    );
    if (this.permissions.size >= KEPT_ROLE_SETS) this.permissions.clear();
    this.permissions.set(key, { roles: [...roles], permissions });
    return permissions;
  }

  private identityOf(record: TokenRecord): Identity {
    const permissions = this.permissionsOf(record.roles);
    return {
      kind: 'token',
      name: record.name,
      roles: record.roles,
      admin: permissions.admin,
      token: record.id,
      permissions,
    };
  }

  private oidcIdentity(name: string, roles: readonly string[]): Identity {
    this.refreshWhenOld();
    const permissions = this.permissionsOf(roles);
    return { kind: 'oidc', name, roles, admin: permissions.admin, token: null, permissions };
  }

  private isBootstrap(digest: Buffer): boolean {
    return this.bootstrap !== undefined && timingSafeEqual(digest, this.bootstrap);
  }

  private isTileCache(digest: Buffer): boolean {
    return this.tileCache !== undefined && timingSafeEqual(digest, this.tileCache);
  }

  private static readonly TILE_CACHE: Identity = {
    kind: 'tile-cache',
    name: TILE_CACHE_NAME,
    roles: [],
    admin: false,
    token: null,
    permissions: new Permissions(false, [TILE_CACHE_ROLE]),
  };

  private static readonly BOOTSTRAP: Identity = {
    kind: 'bootstrap',
    name: BOOTSTRAP_NAME,
    roles: [],
    admin: true,
    token: null,
    permissions: Permissions.ALL,
  };

  /**
   * The identity of a bearer token known without waiting (STEWARD_API_TOKEN, a token verified
   * lately, a JWT verified before and not expired), else undefined.
   */
  knownIdentity(token: string): Identity | undefined {
    // One SHA-256 of the token for the three comparisons: nginx asks about every OWS request.
    const digest = quickDigest(token);
    if (this.isBootstrap(digest)) return AccessService.BOOTSTRAP;
    if (this.isTileCache(digest)) return AccessService.TILE_CACHE;
    if (this.oidc && isJwt(token)) {
      const claims = this.oidc.known(token);
      return claims && this.oidcIdentity(claims.name, claims.roles);
    }
    const id = tokenId(token);
    const found = id === undefined ? undefined : this.tokens.get(id);
    if (!found || found.expiresAt <= this.now()) return undefined;
    const verified = this.verified.get(found.record.id);
    if (!verified || verified.until <= this.now() || verified.hash !== found.record.hash) return undefined;
    if (!timingSafeEqual(verified.digest, digest)) return undefined;
    verified.until = this.now() + VERIFIED_MS;
    this.refreshWhenOld();
    return this.identityOf(found.record);
  }

  /**
   * The identity of a bearer token; undefined when it is none of ours, expired or revoked. Throws
   * 503 when the OpenID provider's keys are needed and cannot be had.
   */
  async identify(token: string): Promise<Identity | undefined> {
    const quick = this.knownIdentity(token);
    if (quick) return quick;
    if (this.oidc && isJwt(token)) {
      const claims = await this.oidc.verify(token);
      return claims && this.oidcIdentity(claims.name, claims.roles);
    }
    const id = tokenId(token);
    if (id === undefined || !this.store) return undefined;
    this.refreshWhenOld();
    let found = this.tokens.get(id);
    if (!found) {
      // Made by another process since the tokens were read.
      const record = await this.store.token(id);
      if (!record) return undefined;
      found = known(record);
      this.tokens.set(id, found);
    }
    if (found.expiresAt <= this.now()) return undefined;
    if (!(await verifySecret(token, found.record.hash))) return undefined;
    // Revoked while the hash was computed? Tokens read since then that lack it are asked again.
    if (this.tokens.get(id)?.record.hash !== found.record.hash) {
      const again = await this.store.token(id);
      if (again?.hash !== found.record.hash) return undefined;
      this.tokens.set(id, known(again));
    }
    this.verified.set(id, { digest: quickDigest(token), hash: found.record.hash, until: this.now() + VERIFIED_MS });
    return this.identityOf(found.record);
  }

  /** The identity of requests without a token: the anonymous role's, when it is defined. */
  anonymous(): Identity | undefined {
    if (!this.roleDefinitions.has(ANONYMOUS_ROLE)) return undefined;
    const permissions = this.permissionsOf([ANONYMOUS_ROLE]);
    // The anonymous role never administers, whatever it says.
    const limited = permissions.admin ? new Permissions(false, []) : permissions;
    return {
      kind: 'anonymous',
      name: ANONYMOUS_ROLE,
      roles: [ANONYMOUS_ROLE],
      admin: false,
      token: null,
      permissions: limited,
    };
  }

  /**
   * `viewer` as if it held `roles` instead of its own: their permissions under its name, for an
   * administrator's "view as" (src/http/view-as.ts). 422 for a role that does not exist.
   */
  viewedAs(viewer: Identity, roles: readonly string[]): Identity {
    for (const role of roles) {
      if (!this.roleDefinitions.has(checkRoleName(role)))
        throw new Unprocessable(`role "${role}" does not exist; GET /api/roles lists those that do`, {
          code: 'role_not_found',
        });
    }
    const held = [...new Set(roles)];
    const permissions = this.permissionsOf(held);
    return { ...viewer, roles: held, admin: permissions.admin, permissions };
  }

  private publicToken({ hash: _hash, ...token }: TokenRecord): PublicToken {
    return { ...token, expired: known(token as TokenRecord).expiresAt <= this.now() };
  }

  private requireStore(): AccessStore {
    if (!this.store)
      throw new NotFound('tokens and roles are kept with the projects; this server has no store for them', {
        code: 'feature_disabled',
      });
    return this.store;
  }

  /** Makes a token; its secret is answered here and never again. */
  async createToken(request: NewToken): Promise<{ id: string; token: string; record: PublicToken }> {
    const store = this.requireStore();
    const name = checkText('token name', request.name.trim());
    if (name === '' || name.length > MAX_TOKEN_NAME)
      throw new Unprocessable(`token name must have 1 to ${MAX_TOKEN_NAME} characters`);
    await this.refresh();
    for (const role of request.roles) {
      if (!this.roleDefinitions.has(checkRoleName(role)))
        throw new Unprocessable(`role "${role}" does not exist; PUT /api/roles/${role} first`, {
          code: 'role_not_found',
        });
    }
    let expires: string | null = null;
    if (request.expires !== undefined && request.expires !== null) {
      const at = timeOf('expires', request.expires);
      if (at <= this.now()) throw new Unprocessable(`expires ${request.expires} is in the past`);
      expires = new Date(at).toISOString();
    }
    const { id, token } = newToken();
    const record: TokenRecord = {
      id,
      name,
      roles: [...new Set(request.roles)],
      created: new Date(this.now()).toISOString(),
      expires,
      hash: await hashSecret(token),
    };
    await store.addToken(record);
    this.tokens.set(id, known(record));
    return { id, token, record: this.publicToken(record) };
  }

  async listTokens(): Promise<PublicToken[]> {
    const tokens = await this.requireStore().tokens();
    return tokens.sort((a, b) => a.created.localeCompare(b.created)).map((token) => this.publicToken(token));
  }

  /** Revokes a token: refused at once here, and by other processes once they hear of it (milliseconds with PostgreSQL). */
  async revokeToken(id: string): Promise<void> {
    const removed = await this.requireStore().removeToken(id);
    this.tokens.delete(id);
    this.verified.delete(id);
    if (!removed) throw new NotFound(`token "${id.slice(0, 80)}" does not exist`, { code: 'token_not_found' });
  }

  async roles(): Promise<Record<string, RoleDefinition>> {
    return Object.fromEntries([...(await this.requireStore().roles())].sort(([a], [b]) => a.localeCompare(b)));
  }

  async role(name: string): Promise<RoleDefinition> {
    const role = (await this.requireStore().roles()).get(checkRoleName(name));
    if (!role) throw new NotFound(`role "${name}" does not exist`, { code: 'role_not_found' });
    return role;
  }

  /** Stores a role, replacing one of the name; true when it is new. */
  async putRole(name: string, role: RoleDefinition): Promise<boolean> {
    const store = this.requireStore();
    checkRoleName(name);
    for (const [key, rule] of Object.entries(role.projects ?? {})) checkRule(key, rule);
    if (name === ANONYMOUS_ROLE && role.admin === true)
      throw new Unprocessable(`role "${ANONYMOUS_ROLE}" is every request's without a token: it cannot administer`);
    const created = await store.putRole(name, role);
    await this.refresh();
    return created;
  }

  async removeRole(name: string): Promise<void> {
    const removed = await this.requireStore().removeRole(checkRoleName(name));
    await this.refresh();
    if (!removed) throw new NotFound(`role "${name}" does not exist`, { code: 'role_not_found' });
  }

  /**
   * Keeps an entry of the audit log, after those this process was given before it, so that its
   * entries are kept in the order they happened; a failure to keep one is logged, never thrown.
   */
  record(entry: AuditEntry): Promise<void> {
    this.log.info(`audit: ${JSON.stringify(entry)}`);
    const store = this.store;
    if (!store) return Promise.resolve();
    this.recording = this.recording.then(() =>
      store
        .appendAudit(entry)
        .catch((error: unknown) => this.log.warn(`cannot keep an audit entry: ${(error as Error).message}`)),
    );
    return this.recording;
  }

  /** The audit log, newest first; `since` and `until` are times, made ISO (UTC) for the store. */
  async audit(filter: AuditFilter): Promise<AuditEntry[]> {
    const store = this.requireStore();
    const since = filter.since === undefined ? undefined : new Date(timeOf('since', filter.since)).toISOString();
    const until = filter.until === undefined ? undefined : new Date(timeOf('until', filter.until)).toISOString();
    return store.audit({
      ...filter,
      ...(since !== undefined && { since }),
      ...(until !== undefined && { until }),
    });
  }
}
