import assert from 'node:assert/strict';

import { test } from '../../test/support/node-test.js';
import { claimAt, isJwt, rolesOf } from './oidc.js';

test('claimAt reads a dotted path, or a member of that very name', () => {
  const payload = { realm_access: { roles: ['viewer'] }, 'a.b': 1, list: [{ x: 1 }] };
  assert.deepEqual(claimAt(payload, 'realm_access.roles'), ['viewer']);
  assert.equal(claimAt(payload, 'a.b'), 1);
  assert.equal(claimAt(payload, 'realm_access.missing.deeper'), undefined);
  assert.equal(claimAt(payload, 'list.0.x'), undefined);
});

test('rolesOf takes an array of names or one string of names, and nothing else', () => {
  assert.deepEqual(rolesOf(['viewer', 'viewer', 3, '', 'editor']), ['viewer', 'editor']);
  assert.deepEqual(rolesOf('viewer  editor'), ['viewer', 'editor']);
  assert.deepEqual(rolesOf({ viewer: true }), []);
  assert.deepEqual(rolesOf(undefined), []);
});

test('isJwt tells a JWT from an API token', () => {
  assert.ok(isJwt('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln'));
  assert.ok(!isJwt('stw_0123456789abcdef_secret'));
  assert.ok(!isJwt('a.b'));
});
