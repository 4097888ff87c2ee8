/**
 * OpenID Connect on the production stack: a real OpenID provider (test/support/oidc-provider.ts)
 * issues JWT access tokens carrying roles; the API takes them as it takes API tokens (whoami,
 * projects filtered by role, the audit log's `who`), refuses expired, foreign, misaddressed and
 * tampered ones with 401 JSON, follows a rotation of the provider's keys, and nginx's
 * auth_request makes QGIS Server honour the token's roles.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { decodeProtectedHeader } from 'jose';

import { steward } from './support/cli.js';
import { apiCall } from './support/http.js';
import { PLUGIN_PATH } from './support/insight-stack.js';
import { after, before, describe, it } from './support/node-test.js';
import {
  AUDIENCE,
  CONSOLE_CLIENT,
  startTestProvider,
  stewardSettings,
  type TestProvider,
} from './support/oidc-provider.js';
import { runPyqgisScript } from './support/pyqgis-scripts.js';
import { type Stack, startStack } from './support/stack.js';
import { until } from './support/wait.js';

const ADMIN = 'the bootstrap administrator of the OpenID Connect test';
const VIEWER_ROLE = { projects: { town: { access: 'read', layers: { secret: { read: false } } } } };
/** Seconds the brief machine's tokens live: past them and the clock tolerance (5 s) they are refused. */
const BRIEF_S = 1;

describe('bearer JWTs of an OpenID provider', () => {
  let provider: TestProvider;
  let stranger: TestProvider;
  let stack: Stack;
  let map = '';
  const tokens: Record<string, string> = {};

  const admin = (method: string, path: string, body?: unknown) => apiCall(stack.api.url, method, path, body, ADMIN);
  const as = (token: string | undefined) => (method: string, path: string, body?: unknown) =>
    apiCall(stack.api.url, method, path, body, token);
  const ows = async (token: string, query: string) => {
    const response = await fetch(`${stack.qgis.url}?MAP=${encodeURIComponent(map)}&${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() };
  };
  const refused = async (token: string, what: string) => {
    const response = await fetch(`${stack.api.url}/api/whoami`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 401, what);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/, what);
    assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="steward"', what);
    assert.match(((await response.json()) as { error: string }).error, /wrong, expired or revoked/, what);
  };

  before(async () => {
    const machines = { 'ci-viewer': ['viewer', 'unknown-role'], 'ops-admin': ['operators'], brief: ['viewer'] };
    provider = await startTestProvider({ machines, lifetimes: { brief: BRIEF_S } });
    // Another issuer with the same keys: its tokens verify against the first one's keys.
    stranger = await startTestProvider({ machines, keys: provider.keys });
    stack = await startStack(
      {
        apiToken: ADMIN,
        tokenFailures: 1000,
        oidc: stewardSettings(provider),
      },
      { env: { QGIS_PLUGINPATH: PLUGIN_PATH } },
      'filesystem',
      'production',
    );
    const folder = join(stack.projectsDir, 'town');
    mkdirSync(folder);
    map = join(folder, 'town.qgs');
    runPyqgisScript('write_access_project.py', map);
    assert.equal((await admin('POST', '/api/projects', { name: 'harbour', author: 'a' })).status, 201);
    assert.equal((await admin('PUT', '/api/roles/viewer', VIEWER_ROLE)).status, 201);
    assert.equal((await admin('PUT', '/api/roles/operators', { admin: true })).status, 201);
    for (const machine of ['ci-viewer', 'ops-admin']) tokens[machine] = await provider.token(machine);
  });
  after(async () => {
    await stack?.stop();
    await provider?.stop();
    await stranger?.stop();
  });

  it('answers who the token names, with its roles', async () => {
    assert.deepEqual((await as(tokens['ci-viewer'])('GET', '/api/whoami')).body, {
      name: 'ci-viewer',
      roles: ['viewer', 'unknown-role'],
      admin: false,
      kind: 'oidc',
    });
    assert.deepEqual((await as(tokens['ops-admin'])('GET', '/api/whoami')).body, {
      name: 'ops-admin',
      roles: ['operators'],
      admin: true,
      kind: 'oidc',
    });
  });

  it('is kept by steward login and answered by steward whoami', async () => {
    const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'steward-oidc-cli-')) };
    const login = await steward(['login', stack.api.url], env, `${tokens['ci-viewer']}\n`);
    assert.equal(login.code, 0, login.err);
    const me = await steward(['whoami', '--json'], env);
    assert.deepEqual(JSON.parse(me.out), {
      name: 'ci-viewer',
      roles: ['viewer', 'unknown-role'],
      admin: false,
      kind: 'oidc',
    });
    rmSync(env.XDG_CONFIG_HOME, { recursive: true, force: true });
  });

  it('says how the console logs in, to anyone', async () => {
    assert.deepEqual((await as(undefined)('GET', '/api/auth/config')).body, {
      oidc: {
        issuer: provider.issuer,
        client_id: CONSOLE_CLIENT,
        audience: AUDIENCE,
        scope: 'openid profile',
        authorization_endpoint: `${provider.issuer}/auth`,
      },
    });
    const exchange = { code: 'not a code', code_verifier: 'v'.repeat(43), redirect_uri: 'http://127.0.0.1/cb' };
    const refusal = await as(undefined)('POST', '/api/auth/token', exchange);
    assert.equal(refusal.status, 401);
    assert.match((refusal.body as { error: string }).error, /the OpenID provider refused the login/);
    assert.equal((await as(undefined)('POST', '/api/auth/token', { ...exchange, code_verifier: 'short' })).status, 400);
  });

  it("restricts projects by the token's roles, as for API tokens, and names it in the audit log", async () => {
    const viewer = as(tokens['ci-viewer']);
    assert.deepEqual((await viewer('GET', '/api/projects')).body, ['town']);
    assert.equal((await viewer('GET', '/api/projects/town')).status, 200);
    assert.deepEqual((await viewer('GET', '/api/projects/harbour')).body, {
      error: 'project "harbour" does not exist',
      code: 'project_not_found',
    });
    assert.equal((await viewer('PATCH', '/api/projects/town', { title: 'mine' })).status, 403);
    assert.equal((await viewer('GET', '/api/tokens')).status, 403);
    const operator = as(tokens['ops-admin']);
    assert.deepEqual(((await operator('GET', '/api/projects')).body as string[]).sort(), ['harbour', 'town']);
    assert.equal((await operator('PUT', '/api/roles/other', {})).status, 201);
    await until('the audit entries kept', async () => {
      const { body } = await admin('GET', '/api/audit?limit=10');
      const entries = body as Array<{ who: string; route: string; status: number; token: string | null }>;
      return (
        entries.some((e) => e.who === 'ci-viewer' && e.route === '/api/projects/:project' && e.status === 403) &&
        entries.some(
          (e) => e.who === 'ops-admin' && e.route === '/api/roles/:role' && e.status === 201 && e.token === null,
        )
      );
    });
  });

  it('refuses tokens for another audience, of another issuer, tampered or malformed, with 401 JSON', async () => {
    await refused(await provider.token('ci-viewer', 'https://elsewhere.test/api'), 'another audience');
    const foreign = await stranger.token('ops-admin');
    assert.equal(decodeProtectedHeader(foreign).kid, decodeProtectedHeader(tokens['ops-admin'] ?? '').kid);
    await refused(foreign, 'another issuer, signed by the same key');
    const [header, payload, signature] = (tokens['ci-viewer'] ?? '').split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const raised = { ...claims, realm_access: { roles: ['operators'] } };
    await refused(`${header}.${Buffer.from(JSON.stringify(raised)).toString('base64url')}.${signature}`, 'tampered');
    await refused(`${header}.${payload}.${signature.slice(0, -4)}AAAA`, 'a wrong signature');
    await refused('a.b.c', 'not a JWT at all');
    assert.equal((await as(tokens['ci-viewer'])('GET', '/api/whoami')).status, 200, 'the genuine one still is taken');
  });

  it('refuses a token once it expired, though it was taken before', async () => {
    const brief = await provider.token('brief');
    const { exp } = JSON.parse(Buffer.from(brief.split('.')[1] ?? '', 'base64url').toString()) as { exp: number };
    assert.equal((await as(brief)('GET', '/api/whoami')).status, 200);
    await sleep(Math.max(0, exp * 1000 + 6000 - Date.now()));
    await refused(brief, 'expired');
  });

  it('takes tokens signed by a key the provider rotated in', async () => {
    const before = decodeProtectedHeader(tokens['ci-viewer'] ?? '').kid;
    await provider.rotateKeys();
    const rotated = await provider.token('ci-viewer');
    assert.notEqual(decodeProtectedHeader(rotated).kid, before, 'signed by the new key');
    // The key set is fetched again for an unknown key, at most every 5 s.
    await until(
      'the new key fetched',
      async () => (await as(rotated)('GET', '/api/whoami')).status === 200,
      15_000,
      500,
    );
  });

  it("makes QGIS Server through nginx honour the token's roles", async () => {
    const viewer = await ows(tokens['ci-viewer'] ?? '', 'SERVICE=WMS&REQUEST=GetCapabilities');
    assert.equal(viewer.status, 200, viewer.text.slice(0, 300));
    assert.match(viewer.text, /<Name>roads<\/Name>/);
    assert.doesNotMatch(viewer.text, /<Name>secret<\/Name>/);
    const operator = await ows(tokens['ops-admin'] ?? '', 'SERVICE=WMS&REQUEST=GetCapabilities');
    assert.match(operator.text, /<Name>secret<\/Name>/);
    const view = 'VERSION=1.3.0&STYLES=&CRS=CRS:84&BBOX=0,0,4,4&WIDTH=40&HEIGHT=40&FORMAT=image/png';
    const hidden = await ows(tokens['ci-viewer'] ?? '', `SERVICE=WMS&REQUEST=GetMap&${view}&LAYERS=secret`);
    assert.equal(hidden.status, 403);
    assert.notEqual(hidden.type, 'image/png');
    const drawn = await ows(tokens['ops-admin'] ?? '', `SERVICE=WMS&REQUEST=GetMap&${view}&LAYERS=secret`);
    assert.equal(drawn.type, 'image/png');
    const foreign = await stranger.token('ops-admin');
    assert.equal((await ows(foreign, 'SERVICE=WMS&REQUEST=GetCapabilities')).status, 401);
  });
});
