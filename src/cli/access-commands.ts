/** The `steward` subcommands of identities (docs/access.md): whoami, tokens, roles and the audit log. */
import { readFile } from 'node:fs/promises';

import type { AuditEntry, RoleDefinition } from '../access/records.js';
import type { PublicToken } from '../access/service.js';
import { CliError, type StewardApi } from './api.js';
import { type Command, countOf, type Invocation, type Io, json, JSON_OPTION, SCHEMA_OPTION } from './command.js';
import { formatTable } from './table.js';

/** Audit entries listed when `--limit` is not given, and the most the API answers. */
const AUDIT_LIMIT = 50;
const AUDIT_MAX = 9999;

function labelled(lines: [string, string][]): string {
  return lines.map(([label, value]) => `${label.padEnd(8)} ${value}\n`).join('');
}

export const whoami: Command = {
  summary: 'Show who the server takes you for: your name, roles, and whether you administer it',
  arguments: [],
  options: JSON_OPTION,
  async run(api, { flags }, io) {
    const me = await api.whoami();
    if (flags['json']) return io.out(json(me));
    io.out(
      labelled([
        ['Name', me.name],
        ['Roles', me.roles.join(', ') || '-'],
        ['Admin', me.admin ? 'yes' : 'no'],
        ['Kind', me.kind],
        ['Server', api.server],
      ]),
    );
  },
};

/** A subcommand of `steward tokens` or `steward roles`: what it does with the arguments after its name. */
type Action = (api: StewardApi, args: string[], invocation: Invocation, io: Io) => Promise<void>;

/** Runs the action named by the first argument (the first action when none), with the arguments after it. */
async function dispatch(
  command: string,
  actions: Record<string, { needs: string[]; run: Action }>,
  api: StewardApi,
  invocation: Invocation,
  io: Io,
): Promise<void> {
  const [name = Object.keys(actions)[0] ?? '', ...args] = invocation.ids;
  const action = Object.hasOwn(actions, name) ? actions[name] : undefined;
  if (!action)
    throw new CliError(`steward ${command}: the action is ${Object.keys(actions).join(', ')}, not "${name}"`);
  if (args.length !== action.needs.length)
    throw new CliError(`steward ${command} ${name}: expected ${action.needs.join(' ') || 'no more arguments'}`);
  await action.run(api, args, invocation, io);
}

function expiry(token: PublicToken): string {
  if (token.expires === null) return 'never';
  return token.expired ? `${token.expires} (expired)` : token.expires;
}

/** `--roles a,b`: the role names, none for an empty value. */
function rolesOf(text: string | undefined): string[] {
  if (text === undefined) throw new CliError('steward tokens create: --roles is required, e.g. --roles viewer,editor');
  return text
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
}

const tokenActions: Record<string, { needs: string[]; run: Action }> = {
  list: {
    needs: [],
    async run(api, _args, { flags }, io) {
      const tokens = await api.tokens();
      if (flags['json']) return io.out(json(tokens));
      const rows = tokens.map((token) => [token.id, token.name, token.roles.join(','), token.created, expiry(token)]);
      io.out(formatTable(['ID', 'NAME', 'ROLES', 'CREATED', 'EXPIRES'], rows));
    },
  },
  create: {
    needs: ['<name>'],
    async run(api, [name = ''], { flags, values }, io) {
      const expires = values['expires'];
      const made = await api.createToken({ name, roles: rolesOf(values['roles']), ...(expires && { expires }) });
      if (flags['json']) return io.out(json(made));
      // The secret alone on stdout, for TOKEN=$(steward tokens create ...); what it is on stderr.
      io.out(`${made.token}\n`);
      io.err(
        `Made token ${made.id} for ${made.name} (roles: ${made.roles.join(', ') || 'none'}; expires: ${made.expires ?? 'never'}).\n` +
          'Keep its secret now: the server keeps only its hash and never shows it again.\n',
      );
    },
  },
  revoke: {
    needs: ['<id>'],
    async run(api, [id = ''], _invocation, io) {
      await api.revokeToken(id);
      io.out(`Revoked token ${id}.\n`);
    },
  },
};

export const tokens: Command = {
  summary: 'List the API tokens, create one (its secret printed once) or revoke one',
  arguments: ['[list|create|revoke]', '[name|id]'],
  options: JSON_OPTION,
  valueOptions: {
    roles: 'create: the roles of the token, separated by commas',
    expires: 'create: when the token expires, e.g. 2027-01-01T00:00:00Z (default: never)',
  },
  run: (api, invocation, io) => dispatch('tokens', tokenActions, api, invocation, io),
};

function projectsText(role: RoleDefinition): string {
  return (
    Object.entries(role.projects ?? {})
      .map(([key, rule]) => `${key}: ${rule.access}`)
      .join(', ') || '-'
  );
}

function refusedText(role: RoleDefinition): string {
  return (
    Object.entries(role.services ?? {})
      .filter(([, allowed]) => allowed === false)
      .map(([service]) => service)
      .join(', ') || '-'
  );
}

/** A role as JSON from a file: what PUT /api/roles/{role} takes, judged by the server. */
async function roleFile(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  });
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

const roleActions: Record<string, { needs: string[]; run: Action }> = {
  list: {
    needs: [],
    async run(api, _args, { flags }, io) {
      const roles = await api.roles();
      if (flags['json']) return io.out(json(roles));
      const rows = Object.entries(roles).map(([name, role]) => [
        name,
        role.admin === true ? 'yes' : 'no',
        projectsText(role),
        refusedText(role),
      ]);
      io.out(formatTable(['ROLE', 'ADMIN', 'PROJECTS', 'REFUSED SERVICES'], rows));
    },
  },
  show: {
    needs: ['<role>'],
    async run(api, [name = ''], _invocation, io) {
      io.out(json(await api.role(name)));
    },
  },
  set: {
    needs: ['<role>', '<file.json>'],
    async run(api, [name = '', file = ''], _invocation, io) {
      const created = await api.putRole(name, await roleFile(file));
      io.out(`${created ? 'Made' : 'Replaced'} role ${name}.\n`);
    },
  },
  delete: {
    needs: ['<role>'],
    async run(api, [name = ''], _invocation, io) {
      await api.removeRole(name);
      io.out(`Removed role ${name}; the tokens that name it keep the name and are granted nothing by it.\n`);
    },
  },
};

export const roles: Command = {
  summary: 'List the roles, show one as JSON, make or replace one from a JSON file, or remove one',
  arguments: ['[list|show|set|delete]', '[role]', '[file.json]'],
  options: JSON_OPTION,
  run: (api, invocation, io) => dispatch('roles', roleActions, api, invocation, io),
};

function auditTable(entries: AuditEntry[]): string {
  const rows = entries.map((entry) => [
    entry.at,
    entry.who ?? '-',
    entry.method,
    entry.path,
    entry.project === null ? '-' : `${entry.schema}/${entry.project}`,
    String(entry.status),
  ]);
  return formatTable(['TIME', 'WHO', 'METHOD', 'PATH', 'PROJECT', 'STATUS'], rows);
}

export const audit: Command = {
  summary: 'List the changes made through the API, newest first: who, when, what, on which project, the answer',
  arguments: [],
  options: JSON_OPTION,
  valueOptions: {
    project: "only the changes of this project (with --schema, of that schema's)",
    ...SCHEMA_OPTION,
    who: 'only the changes of this identity (a token name, bootstrap, anonymous)',
    since: 'only the changes at or after this time, e.g. 2026-12-01T00:00:00Z',
    until: 'only the changes before this time',
    limit: `how many changes (default ${AUDIT_LIMIT}, at most ${AUDIT_MAX})`,
  },
  async run(api, { flags, values }, io) {
    const limit = countOf('limit', values['limit'], AUDIT_LIMIT, AUDIT_MAX);
    const filter = Object.fromEntries(
      ['project', 'schema', 'who', 'since', 'until'].flatMap((key) => {
        const value = values[key];
        return value === undefined ? [] : [[key, value]];
      }),
    );
    const entries = await api.audit({ ...filter, limit: String(limit) });
    io.out(flags['json'] ? json(entries) : auditTable(entries));
  },
};
