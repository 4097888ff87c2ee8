import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { Permissions } from './permissions.js';
import { type RoleDefinition } from './records.js';

const town = { name: 'town', schema: 'public' };
const harbour = { name: 'harbour', schema: 'public' };
const fleet = { name: 'shared', schema: 'fleet' };

describe('permissions of roles together', () => {
  it('takes the most specific key of a role, and the most any role grants', () => {
    const reader: RoleDefinition = { projects: { '*': { access: 'read' }, town: { access: 'write' } } };
    const schemaAdmin: RoleDefinition = {
      projects: { 'fleet/*': { access: 'admin' }, 'public/harbour': { access: 'read' } },
    };
    const one = new Permissions(false, [reader]);
    assert.equal(one.access(town), 'write');
    assert.equal(one.access(harbour), 'read');
    assert.equal(one.access(fleet), 'read');
    const both = new Permissions(false, [reader, schemaAdmin]);
    assert.equal(both.access(fleet), 'admin');
    assert.ok(both.may(town, 'write') && !both.may(town, 'admin'));
    assert.equal(new Permissions(false, [schemaAdmin]).access(town), 'none');
    assert.ok(both.writesSomewhere);
    assert.ok(!new Permissions(false, [{ projects: { town: { access: 'read' } } }]).writesSomewhere);
  });

  it('never takes inherited members for keys', () => {
    const role: RoleDefinition = { projects: { town: { access: 'read' } } };
    const permissions = new Permissions(false, [role]);
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty'])
      assert.equal(permissions.access({ name, schema: 'public' }), 'none');
    assert.ok(!permissions.layerReadable({ name: 'constructor', schema: 'public' }, 'x'));
  });

  it('shows a layer that any role granting the project leaves readable', () => {
    const hides: RoleDefinition = { projects: { town: { access: 'read', layers: { secret: { read: false } } } } };
    const shows: RoleDefinition = { projects: { town: { access: 'read' } } };
    const other: RoleDefinition = { projects: { harbour: { access: 'write' } } };
    assert.ok(!new Permissions(false, [hides]).layerReadable(town, 'secret'));
    assert.ok(new Permissions(false, [hides]).layerReadable(town, 'roads'));
    assert.ok(!new Permissions(false, [hides, other]).layerReadable(town, 'secret'));
    assert.ok(new Permissions(false, [hides, shows]).layerReadable(town, 'secret'));
    assert.ok(Permissions.ALL.layerReadable(town, 'secret'));
  });

  it('refuses a service only when every role refuses it', () => {
    const refuses: RoleDefinition = { services: { 'WFS-T': false } };
    assert.ok(!new Permissions(false, [refuses]).service('WFS-T'));
    assert.ok(new Permissions(false, [refuses]).service('WMS'));
    assert.ok(new Permissions(false, [refuses, {}]).service('WFS-T'));
  });
});
