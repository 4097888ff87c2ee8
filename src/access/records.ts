/** What the access store keeps: tokens, roles and the audit log (docs/access.md). */

/** Services and operations of QGIS Server a role may be refused. */
export const OWS_SERVICES = [
  'WMS',
  'WFS',
  'WFS-T',
  'WCS',
  'WMTS',
  'OAPIF',
  'GetMap',
  'GetFeatureInfo',
  'GetLegendGraphic',
  'GetPrint',
] as const;
export type OwsService = (typeof OWS_SERVICES)[number];

export type ProjectAccess = 'read' | 'write' | 'admin';

export interface LayerRule {
  /** false hides the layer: it is not listed, read or drawn. */
  read?: boolean;
  hidden_attributes?: string[];
  /** A QGIS expression the features served must match; `@steward_user` and `@steward_roles` are the identity's. */
  filter?: string;
}

export interface ProjectRule {
  access: ProjectAccess;
  /** By layer name. */
  layers?: Record<string, LayerRule>;
}

/**
 * A role: what its holders may do. `projects` is keyed by project: `name` (schema public),
 * `schema/name`, `schema/*` (every project of a schema) or `*` (every project).
 */
export interface RoleDefinition {
  /** Administrators: tokens, roles, the audit log, instances, and every project. */
  admin?: boolean;
  projects?: Record<string, ProjectRule>;
  services?: Partial<Record<OwsService, boolean>>;
}

export interface TokenRecord {
  id: string;
  name: string;
  roles: string[];
  /** ISO times; `expires` null for a token that does not expire. */
  created: string;
  expires: string | null;
  /** The secret's slow hash (token-secret.ts). */
  hash: string;
}

/** A change made through the API, as the audit log keeps it. */
export interface AuditEntry {
  at: string;
  /** The identity's name; null when the request carried none that was valid. */
  who: string | null;
  token: string | null;
  method: string;
  route: string;
  path: string;
  project: string | null;
  schema: string | null;
  status: number;
}

export interface AuditFilter {
  project?: string;
  schema?: string;
  who?: string;
  /** ISO time: entries at or after it. */
  since?: string;
  /** ISO time: entries before it. */
  until?: string;
  /** Newest first, at most this many. */
  limit: number;
}

/** Whether an audit entry passes a filter (limit aside). */
export function auditMatches(entry: AuditEntry, filter: AuditFilter): boolean {
  return (
    (filter.project === undefined || entry.project === filter.project) &&
    (filter.schema === undefined || entry.schema === filter.schema) &&
    (filter.who === undefined || entry.who === filter.who) &&
    (filter.since === undefined || Date.parse(entry.at) >= Date.parse(filter.since)) &&
    (filter.until === undefined || Date.parse(entry.at) < Date.parse(filter.until))
  );
}

/**
 * Where tokens, roles and the audit log are kept: beside the projects (their folder or their
 * database), so that every Steward process on them agrees.
 */
export interface AccessStore {
  tokens(): Promise<TokenRecord[]>;
  token(id: string): Promise<TokenRecord | undefined>;
  addToken(token: TokenRecord): Promise<void>;
  /** false when there was no such token. */
  removeToken(id: string): Promise<boolean>;
  roles(): Promise<Map<string, RoleDefinition>>;
  /** true when the role is new. */
  putRole(name: string, role: RoleDefinition): Promise<boolean>;
  removeRole(name: string): Promise<boolean>;
  appendAudit(entry: AuditEntry): Promise<void>;
  /** Newest first. */
  audit(filter: AuditFilter): Promise<AuditEntry[]>;
  /** Calls `changed` when another process may have changed tokens or roles; `stop` ends it. */
  watch(changed: () => void): Promise<{ stop(): Promise<void> }>;
}
