import { type ProjectRef } from '../storage/project-ref.js';
import { type OwsService, type ProjectAccess, type ProjectRule, type RoleDefinition } from './records.js';

/** What one may do with a project: nothing, or one of a role's levels. */
export type Access = 'none' | ProjectAccess;

const RANK: Record<Access, number> = { none: 0, read: 1, write: 2, admin: 3 };

/** Whether `access` is at least `wanted`. */
export function grants(access: Access, wanted: Access): boolean {
  return RANK[access] >= RANK[wanted];
}

function own<T>(record: Record<string, T> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/**
 * The rule of a role for a project: the most specific of `schema/name` (or `name` in schema
 * public), `schema/*` and `*`.
 */
export function ruleFor(role: RoleDefinition, ref: ProjectRef): ProjectRule | undefined {
  const projects = role.projects;
  if (projects === undefined) return undefined;
  return (
    own(projects, `${ref.schema}/${ref.name}`) ??
    (ref.schema === 'public' ? own(projects, ref.name) : undefined) ??
    own(projects, `${ref.schema}/*`) ??
    own(projects, '*')
  );
}

/**
 * What an identity's roles grant together: the most any of them grants a project, each layer any
 * of the roles that grant the project leaves readable, each service any role leaves on.
 */
export class Permissions {
  /** Administrators: everything. */
  static readonly ALL = new Permissions(true, []);

  private readonly byProject = new Map<string, Access>();
  /** Whether some project may be written: the datasources one picks from when adding a layer. */
  readonly writesSomewhere: boolean;

  constructor(
    readonly admin: boolean,
    private readonly roles: readonly RoleDefinition[],
  ) {
    this.writesSomewhere =
      admin || roles.some((role) => Object.values(role.projects ?? {}).some((rule) => grants(rule.access, 'write')));
  }

  access(ref: ProjectRef): Access {
    if (this.admin) return 'admin';
    const key = `${ref.schema}/${ref.name}`;
    let best = this.byProject.get(key);
    if (best !== undefined) return best;
    best = 'none';
    for (const role of this.roles) {
      const rule = ruleFor(role, ref);
      if (rule && RANK[rule.access] > RANK[best]) best = rule.access;
    }
    this.byProject.set(key, best);
    return best;
  }

  may(ref: ProjectRef, wanted: Access): boolean {
    return grants(this.access(ref), wanted);
  }

  /** Whether a layer of a readable project may be seen: a role that grants the project leaves it readable. */
  layerReadable(ref: ProjectRef, layer: string): boolean {
    if (this.admin) return true;
    return this.roles.some((role) => {
      const rule = ruleFor(role, ref);
      return rule !== undefined && own(rule.layers, layer)?.read !== false;
    });
  }

  /** The rules for the project of the roles that grant it; none for an administrator, who needs none. */
  rulesFor(ref: ProjectRef): ProjectRule[] {
    if (this.admin) return [];
    return this.roles.flatMap((role) => ruleFor(role, ref) ?? []);
  }

  /** A service is refused only when every role refuses it. */
  service(name: OwsService): boolean {
    return this.admin || this.roles.length === 0 || this.roles.some((role) => own(role.services, name) !== false);
  }
}
