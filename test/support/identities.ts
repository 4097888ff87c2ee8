import { Permissions } from '../../src/access/permissions.js';
import { type RoleDefinition } from '../../src/access/records.js';
import { type Identity, type IdentityKind } from '../../src/access/service.js';

/** Ann, holding the roles named by `roles`' keys, as the access service would identify her. */
export function identityOf(
  roles: Record<string, RoleDefinition>,
  { kind = 'token', admin = false }: { kind?: IdentityKind; admin?: boolean } = {},
): Identity {
  const permissions = new Permissions(admin, Object.values(roles));
  return { kind, name: 'ann', roles: Object.keys(roles), admin, token: kind === 'token' ? 'id' : null, permissions };
}
