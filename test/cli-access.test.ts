/**
 * `steward login`, `logout`, `whoami`, `tokens`, `roles` and `audit` against a real API with access
 * control on: the token kept for the server (a file of the user's alone) serves the later commands,
 * a token made from the shell opens what its roles grant and nothing once revoked, and the changes
 * the commands made are in the audit log. One login runs `steward` as a process, its token piped in.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { steward } from './support/cli.js';
import { apiCall } from './support/http.js';
import { after, before, describe, it } from './support/node-test.js';
import { waitFor } from './support/wait.js';

const ADMIN = 'the bootstrap administrator token of the cli test';
const MAIN = join(import.meta.dirname, '..', 'src', 'cli', 'main.ts');

const VIEWER = { projects: { town: { access: 'read' } }, services: { 'WFS-T': false } };

/** `steward` as a process, with `input` piped to its stdin. */
async function stewardProcess(
  argv: string[],
  env: NodeJS.ProcessEnv,
  input: string,
): Promise<{ code: number; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...argv], {
    env: { PATH: process.env['PATH'], ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let [out, err] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.stdin.end(input);
  const [code] = (await once(child, 'exit')) as [number];
  return { code, out, err };
}

describe('steward login, whoami, tokens, roles and audit against a real API', () => {
  let api: RunningServer;
  let projectsDir = '';
  let home = '';
  /** No server URL nor token: what a shell has after `steward login`. */
  let env: NodeJS.ProcessEnv;
  let server = '';
  let credentials = '';
  let viewer = '';
  let viewerId = '';

  before(async () => {
    projectsDir = mkdtempSync(join(tmpdir(), 'steward-cli-access-'));
    home = mkdtempSync(join(tmpdir(), 'steward-cli-home-'));
    api = await startServer(
      loadConfig({
        STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/ows/',
        STEWARD_QGISSERVER_VERSION: '3.22',
        STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
        STEWARD_API_TOKEN: ADMIN,
        STEWARD_LOGLEVEL: 'ERROR',
        STEWARD_LISTEN: '127.0.0.1:0',
      }),
    );
    server = `${api.url}/`;
    env = { XDG_CONFIG_HOME: join(home, 'config') };
    credentials = join(home, 'config', 'steward', 'credentials.json');
    for (const name of ['town', 'harbour'])
      assert.equal((await apiCall(api.url, 'POST', '/api/projects', { name, author: 'a' }, ADMIN)).status, 201);
  });
  after(async () => {
    await api.close();
    for (const dir of [projectsDir, home]) rmSync(dir, { recursive: true, force: true });
  });

  it('logs in with a token the server takes, kept for the user alone, and refuses a wrong one', async () => {
    const nowhere = await steward(['whoami'], env);
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.err, /STEWARD_SERVER_URL is not set.*steward login URL/);
    const noUrl = await steward(['login'], env, ADMIN);
    assert.equal(noUrl.code, 1);
    assert.match(noUrl.err, /give the server's URL/);

    const wrong = await steward(['login', api.url, '--token', 'stw_0123456789abcdef_nope'], env);
    assert.equal(wrong.code, 1);
    assert.match(wrong.err, new RegExp(`^steward: ${server} refused the token, which is not kept: this API needs`));
    assert.throws(() => statSync(credentials), /ENOENT/);

    const done = await steward(['login', api.url], env, `${ADMIN}\n`);
    assert.equal(done.code, 0, done.err);
    assert.equal(
      done.out,
      `Logged in to ${server} as bootstrap (an administrator); the token is kept in ${credentials}.\n`,
    );
    assert.equal(statSync(credentials).mode & 0o777, 0o600);
    assert.equal(statSync(join(home, 'config', 'steward')).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(readFileSync(credentials, 'utf8')), {
      current: server,
      servers: { [server]: { token: ADMIN, name: 'bootstrap' } },
    });

    const me = await steward(['whoami'], env);
    assert.equal(me.code, 0, me.err);
    assert.equal(me.out, `Name     bootstrap\nRoles    -\nAdmin    yes\nKind     bootstrap\nServer   ${server}\n`);
  });

  it('makes, replaces, shows and lists roles from JSON files, and reports refusals', async () => {
    const file = join(home, 'viewer.json');
    writeFileSync(file, JSON.stringify(VIEWER));
    const made = await steward(['roles', 'set', 'viewer', file], env);
    assert.deepEqual([made.code, made.out], [0, 'Made role viewer.\n'], made.err);
    assert.equal((await steward(['roles', 'set', 'viewer', file], env)).out, 'Replaced role viewer.\n');
    writeFileSync(join(home, 'ops.json'), JSON.stringify({ admin: true, projects: { '*': { access: 'admin' } } }));
    assert.equal((await steward(['roles', 'set', 'ops', join(home, 'ops.json')], env)).code, 0);

    const shown = await steward(['roles', 'show', 'viewer'], env);
    assert.deepEqual(JSON.parse(shown.out), VIEWER);
    const listed = await steward(['roles'], env);
    assert.equal(
      listed.out,
      [
        'ROLE     ADMIN   PROJECTS     REFUSED SERVICES',
        'ops      yes     *: admin     -',
        'viewer   no      town: read   WFS-T',
        '',
      ].join('\n'),
    );
    assert.deepEqual(Object.keys(JSON.parse((await steward(['roles', 'list', '--json'], env)).out) as object), [
      'ops',
      'viewer',
    ]);

    writeFileSync(join(home, 'broken.json'), '{"projects": ');
    const broken = await steward(['roles', 'set', 'x', join(home, 'broken.json')], env);
    assert.equal(broken.code, 1);
    assert.match(broken.err, /broken\.json is not JSON/);
    writeFileSync(join(home, 'bad.json'), JSON.stringify({ projects: { town: { access: 'owner' } } }));
    const bad = await steward(['roles', 'set', 'x', join(home, 'bad.json')], env);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^steward: .*access/);
    const missing = await steward(['roles', 'show', 'nobody'], env);
    assert.deepEqual([missing.code, missing.err], [1, 'steward: role "nobody" does not exist [role_not_found]\n']);
    const unknown = await steward(['roles', 'grant', 'x'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /the action is list, show, set, delete, not "grant"/);

    assert.equal((await steward(['roles', 'delete', 'ops'], env)).code, 0);
    assert.equal((await steward(['roles', 'delete', 'ops'], env)).code, 1);
  });

  it('makes a token whose secret alone is printed, lists it, and revokes it', async () => {
    const made = await steward(
      ['tokens', 'create', 'ci', '--roles', 'viewer', '--expires', '2099-01-01T00:00:00Z'],
      env,
    );
    assert.equal(made.code, 0, made.err);
    viewer = made.out.trimEnd();
    assert.match(viewer, /^stw_[0-9a-f]{16}_\S+$/);
    viewerId = viewer.split('_')[1] ?? '';
    assert.match(
      made.err,
      new RegExp(`^Made token ${viewerId} for ci \\(roles: viewer; expires: 2099-01-01T00:00:00.000Z\\)`),
    );
    const noRoles = await steward(['tokens', 'create', 'ci'], env);
    assert.equal(noRoles.code, 1);
    assert.match(noRoles.err, /--roles is required/);
    const unknownRole = await steward(['tokens', 'create', 'ci', '--roles', 'nobody'], env);
    assert.deepEqual(
      [unknownRole.code, unknownRole.err],
      [1, 'steward: role "nobody" does not exist; PUT /api/roles/nobody first [role_not_found]\n'],
    );

    // The environment's token is sent rather than the kept one.
    const asViewer = { ...env, STEWARD_API_TOKEN: viewer };
    const me = await steward(['whoami', '--json'], asViewer);
    assert.deepEqual(JSON.parse(me.out), { name: 'ci', roles: ['viewer'], admin: false, kind: 'token' });
    const refused = await steward(['tokens'], asViewer);
    assert.deepEqual([refused.code, refused.err], [1, 'steward: GET /api/tokens is for administrators [forbidden]\n']);

    const listed = await steward(['tokens', 'list'], env);
    const [header, row, ...rest] = listed.out.trimEnd().split('\n');
    assert.match(header ?? '', /^ID\s+NAME\s+ROLES\s+CREATED\s+EXPIRES$/);
    assert.match(row ?? '', new RegExp(`^${viewerId}\\s+ci\\s+viewer\\s+\\S+Z\\s+2099-01-01T00:00:00.000Z$`));
    assert.deepEqual(rest, []);

    const revoked = await steward(['tokens', 'revoke', viewerId], env);
    assert.deepEqual([revoked.code, revoked.out], [0, `Revoked token ${viewerId}.\n`]);
    const after = await steward(['whoami'], asViewer);
    assert.equal(after.code, 1);
    assert.match(after.err, /wrong, expired or revoked/);
    assert.equal((await steward(['tokens', 'revoke', viewerId], env)).code, 1);
  });

  it('lists the changes the commands made, newest first, filtered', async () => {
    assert.equal((await apiCall(api.url, 'PATCH', '/api/projects/town', { title: 'Town' }, ADMIN)).status, 200);
    // Entries are kept after the reply: the command may run before the PATCH's is.
    const listed = await waitFor('the PATCH in the audit log', async () => {
      const outcome = await steward(['audit', '--limit', '3'], env);
      assert.equal(outcome.code, 0, outcome.err);
      return outcome.out.includes('PATCH') && outcome;
    });
    const lines = listed.out.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^TIME\s+WHO\s+METHOD\s+PATH\s+PROJECT\s+STATUS$/);
    assert.deepEqual(
      lines.slice(1).map((line) => line.split(/\s+/).slice(1)),
      [
        ['bootstrap', 'PATCH', '/api/projects/town', 'public/town', '200'],
        ['bootstrap', 'DELETE', `/api/tokens/${viewerId}`, '-', '404'],
        ['bootstrap', 'DELETE', `/api/tokens/${viewerId}`, '-', '200'],
      ],
    );
    const town = JSON.parse((await steward(['audit', '--project', 'town', '--json'], env)).out) as Array<{
      method: string;
      status: number;
    }>;
    assert.deepEqual(
      town.map(({ method, status }) => [method, status]),
      [
        ['PATCH', 200],
        ['POST', 201],
      ],
    );
    const badLimit = await steward(['audit', '--limit', '0'], env);
    assert.deepEqual([badLimit.code, badLimit.err], [1, 'steward: --limit must be from 1 to 9999, not "0"\n']);
  });

  it('logs in as a process reading the token from stdin, and logs out', async () => {
    const made = await steward(['tokens', 'create', 'shell', '--roles', 'viewer'], env);
    const token = made.out.trimEnd();
    const other = { XDG_CONFIG_HOME: join(home, 'other') };
    const login = await stewardProcess(['login', api.url], other, `${token}\n`);
    assert.equal(login.code, 0, login.err);
    assert.equal(
      login.out,
      `Logged in to ${server} as shell (roles: viewer); the token is kept in ${join(home, 'other', 'steward', 'credentials.json')}.\n`,
    );
    const me = await steward(['whoami', '--json'], other);
    assert.deepEqual(JSON.parse(me.out), { name: 'shell', roles: ['viewer'], admin: false, kind: 'token' });

    const out = await steward(['logout'], other);
    assert.deepEqual([out.code, out.out], [0, `Forgot the token kept for ${server}.\n`]);
    assert.equal((await steward(['logout', api.url], other)).out, `No token was kept for ${server}.\n`);
    // The server is no longer known without STEWARD_SERVER_URL, and no token is sent with it.
    assert.equal((await steward(['whoami'], other)).code, 1);
    const anonymous = await steward(['whoami'], { ...other, STEWARD_SERVER_URL: api.url });
    assert.equal(anonymous.code, 1);
    assert.match(anonymous.err, /needs Authorization: Bearer/);
    // The first login is untouched.
    assert.equal((JSON.parse(readFileSync(credentials, 'utf8')) as { current: string }).current, server);
  });
});
