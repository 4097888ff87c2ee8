/**
 * Who may do what (docs/access.md): API tokens (made, listed, revoked; a new token's secret is
 * shown this once) and roles (what each grants on which projects).
 */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Answer, api, type Body } from '../api/client';
import { AccessTabs } from '../components/access-tabs';
import { ConfirmDialog } from '../components/confirm-dialog';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { TableHead } from '../components/table-head';
import { useAction, useApi } from '../components/use-api';

type Token = Answer<'/api/tokens'>[number];
type Roles = Answer<'/api/roles'>;
type Role = NonNullable<Body<'/api/roles/{role}', 'put'>>;
type Access = 'read' | 'write' | 'admin';

export default function AccessPage(): JSX.Element {
  const tokens = useApi((signal) => api.get('/api/tokens', { signal }), []);
  const roles = useApi((signal) => api.get('/api/roles', { signal }), []);
  const [editing, setEditing] = useState<{ name: string; role: Role } | undefined>(undefined);
  return (
    <Page title="Access">
      <AccessTabs current="/access" />
      <p class="muted">
        Requests carry an API token (Authorization: Bearer …); its roles say which projects it may read, change or
        administer. Requests without a token have the role <code>anonymous</code>, if it exists.
      </p>
      <div class="grid-2">
        <section class="card" aria-labelledby="tokens-title">
          <h2 id="tokens-title">API tokens</h2>
          <ErrorMessage error={tokens.error} />
          {!tokens.data && tokens.loading && <Loading what="the tokens" />}
          {tokens.data && <TokenTable tokens={tokens.data} onRevoked={tokens.reload} />}
          <NewToken roles={Object.keys(roles.data ?? {})} onCreated={tokens.reload} />
        </section>
        <section class="card" aria-labelledby="roles-title">
          <h2 id="roles-title">Roles</h2>
          <ErrorMessage error={roles.error} />
          {!roles.data && roles.loading && <Loading what="the roles" />}
          {roles.data && (
            <RoleList
              roles={roles.data}
              onChanged={roles.reload}
              onEdit={(name) => setEditing({ name, role: roles.data?.[name] as Role })}
            />
          )}
          <RoleForm key={editing?.name ?? ''} start={editing} onSaved={roles.reload} />
        </section>
      </div>
    </Page>
  );
}

function TokenTable({ tokens, onRevoked }: { tokens: Token[]; onRevoked: () => void }): JSX.Element {
  const [revoking, setRevoking] = useState<Token | undefined>(undefined);
  if (tokens.length === 0) return <p class="muted">No token yet.</p>;
  return (
    <>
      <table class="table stack">
        <TableHead caption="API tokens" columns={['Name', 'Roles', 'Expires']} actions />
        <tbody>
          {tokens.map((token) => (
            <tr key={token.id}>
              <td data-label="Name">{token.name}</td>
              <td data-label="Roles">{token.roles.join(', ') || '–'}</td>
              <td data-label="Expires">
                {token.expires ? new Date(token.expires).toLocaleString() : 'never'}
                {token.expired && <span class="error-inline"> (expired)</span>}
              </td>
              <td>
                <button
                  type="button"
                  class="danger"
                  onClick={() => setRevoking(token)}
                  aria-label={`Revoke token ${token.name}`}
                >
                  Revoke…
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {revoking && (
        <ConfirmDialog
          title={`Revoke token “${revoking.name}”?`}
          confirm="Revoke it"
          cancel="Keep it"
          onClose={() => setRevoking(undefined)}
          onConfirm={async () => {
            await api.delete('/api/tokens/{id}', { path: { id: revoking.id } });
            onRevoked();
          }}
        >
          <p>Requests with this token are refused from now on (401). A revoked token cannot be brought back.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

function NewToken({ roles, onCreated }: { roles: string[]; onCreated: () => void }): JSX.Element {
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [secret, setSecret] = useState<{ name: string; token: string } | undefined>(undefined);
  const create = useAction(async () => {
    setSecret(undefined);
    if (name.trim() === '') throw new Error('The token needs a name: who or what it is for.');
    const made = await api.post('/api/tokens', {
      body: { name: name.trim(), roles: chosen, ...(expires ? { expires: new Date(expires).toISOString() } : {}) },
    });
    setSecret({ name: made.name, token: made.token });
    setName('');
    setChosen([]);
    setExpires('');
    onCreated();
  });
  const toggle = (role: string, on: boolean): void =>
    setChosen(on ? [...chosen, role] : chosen.filter((each) => each !== role));
  return (
    <form
      class="form"
      aria-label="New API token"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h3>New token</h3>
      <div class="fields">
        <label>
          Token name
          <input value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <label>
          Expires (optional)
          <input type="datetime-local" value={expires} onInput={(event) => setExpires(event.currentTarget.value)} />
        </label>
      </div>
      <fieldset class="choices">
        <legend>Roles</legend>
        {roles.length === 0 && <p class="muted">No role yet: make one to grant the token something.</p>}
        {roles.map((role) => (
          <label key={role} class="check">
            <input
              type="checkbox"
              checked={chosen.includes(role)}
              onChange={(event) => toggle(role, event.currentTarget.checked)}
            />
            {role}
          </label>
        ))}
      </fieldset>
      <ErrorMessage error={create.error} />
      <button type="submit" class="primary" disabled={create.busy}>
        {create.busy ? 'Making…' : 'Make the token'}
      </button>
      {secret && (
        <div class="secret" role="status">
          <p>
            <strong>Token {secret.name}:</strong> copy it now, it is shown this once and Steward keeps only its hash.
          </p>
          <code aria-label={`Secret of token ${secret.name}`}>{secret.token}</code>{' '}
          <button type="button" onClick={() => void navigator.clipboard?.writeText(secret.token)}>
            Copy
          </button>
        </div>
      )}
    </form>
  );
}

function grantsInWords(role: Role): string {
  const grants = Object.entries(role.projects ?? {}).map(([key, rule]) => `${rule.access} ${key}`);
  return [...(role.admin ? ['administrator'] : []), ...grants].join('; ') || 'nothing';
}

function RoleList(props: { roles: Roles; onChanged: () => void; onEdit: (name: string) => void }): JSX.Element {
  const { roles, onChanged } = props;
  const [removing, setRemoving] = useState<string | undefined>(undefined);
  const names = Object.keys(roles);
  if (names.length === 0) return <p class="muted">No role yet.</p>;
  return (
    <>
      <ul class="layer-list">
        {names.map((name) => (
          <li key={name} class="tree-row">
            <strong>{name}</strong> <span>{grantsInWords(roles[name] as Role)}</span>
            <span class="row-actions">
              <button type="button" onClick={() => props.onEdit(name)} aria-label={`Edit role ${name}`}>
                Edit
              </button>
              <button type="button" class="danger" onClick={() => setRemoving(name)} aria-label={`Remove role ${name}`}>
                Remove…
              </button>
            </span>
          </li>
        ))}
      </ul>
      {removing && (
        <ConfirmDialog
          title={`Remove role “${removing}”?`}
          confirm="Remove it"
          cancel="Keep it"
          onClose={() => setRemoving(undefined)}
          onConfirm={async () => {
            await api.delete('/api/roles/{role}', { path: { role: removing } });
            onChanged();
          }}
        >
          <p>Tokens that name it keep the name, and are granted nothing by it.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** The one access a role grants its projects, and whether they differ. */
function accessOf(role: Role | undefined): { access: Access; mixed: boolean } {
  const accesses = [...new Set(Object.values(role?.projects ?? {}).map((rule) => rule.access))];
  return { access: accesses[0] ?? 'read', mixed: accesses.length > 1 };
}

/**
 * The role the form describes. What the form does not show is kept from the role it edits: its
 * services, and the layer rules of the projects it still names.
 */
function roleOf(start: Role | undefined, admin: boolean, keys: string[], access: Access): Role {
  const before = start?.projects ?? {};
  const projects = Object.fromEntries(keys.map((key) => [key, { ...before[key], access }]));
  return {
    ...(start?.services ? { services: start.services } : {}),
    ...(admin ? { admin: true } : {}),
    ...(keys.length > 0 ? { projects } : {}),
  };
}

/** Makes or replaces a role: administrator, or an access to projects by name (`*` for all). */
function RoleForm({
  start,
  onSaved,
}: {
  start?: { name: string; role: Role } | undefined;
  onSaved: () => void;
}): JSX.Element {
  const [name, setName] = useState(start?.name ?? '');
  const [admin, setAdmin] = useState(start?.role.admin ?? false);
  const [projects, setProjects] = useState(Object.keys(start?.role.projects ?? {}).join(', '));
  const [access, setAccess] = useState<Access>(accessOf(start?.role).access);
  const [message, setMessage] = useState<string | undefined>(undefined);
  const save = useAction(async () => {
    setMessage(undefined);
    const role = name.trim();
    if (role === '') throw new Error('The role needs a name.');
    const keys = projects
      .split(',')
      .map((key) => key.trim())
      .filter(Boolean);
    const body = roleOf(start?.name === role ? start.role : undefined, admin, keys, access);
    await api.put('/api/roles/{role}', { path: { role }, body });
    setMessage(`Role ${role} saved: ${grantsInWords(body)}.`);
    onSaved();
  });
  return (
    <form
      class="form"
      aria-label="Make or replace a role"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      <h3>{start ? `Edit role ${start.name}` : 'Make or replace a role'}</h3>
      {accessOf(start?.role).mixed && (
        <p class="muted">
          This role grants its projects different accesses: saving gives them all the one chosen here.
        </p>
      )}
      <div class="fields">
        <label>
          Role name
          <input value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <label>
          Projects (names separated by commas, schema/name, * for all)
          <input value={projects} onInput={(event) => setProjects(event.currentTarget.value)} />
        </label>
        <label>
          Access to them
          <select value={access} onChange={(event) => setAccess(event.currentTarget.value as Access)}>
            <option value="read">read</option>
            <option value="write">write</option>
            <option value="admin">admin</option>
          </select>
        </label>
      </div>
      <label class="check">
        <input type="checkbox" checked={admin} onChange={(event) => setAdmin(event.currentTarget.checked)} />
        Administrator (tokens, roles, instances, every project)
      </label>
      <ErrorMessage error={save.error} />
      {message && (
        <p role="status" class="muted">
          {message}
        </p>
      )}
      <button type="submit" class="primary" disabled={save.busy}>
        Save the role
      </button>
    </form>
  );
}
