import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';

import { describe, it } from '../../test/support/node-test.js';
import { encodeOwsRules, owsAccessValue, owsRules, owsServicesOf } from './ows-rules.js';
import { Permissions } from './permissions.js';
import { type RoleDefinition } from './records.js';
import { type Identity } from './service.js';

const town = { name: 'town', schema: 'public' };

function identity(roles: Record<string, RoleDefinition>, admin = false): Identity {
  const names = Object.keys(roles);
  const permissions = new Permissions(admin, Object.values(roles));
  return { kind: 'token', name: 'ann', roles: names, admin, token: 'id', permissions };
}

const viewer: RoleDefinition = {
  projects: {
    town: {
      access: 'read',
      layers: {
        secret: { read: false },
        roads: { hidden_attributes: ['owner', 'phone'], filter: `"kind" = 'public'` },
      },
    },
  },
  services: { 'WFS-T': false },
};

describe("an identity's rules for QGIS Server", () => {
  it('hides layers and attributes, filters features, and refuses edits to readers', () => {
    const rules = owsRules(identity({ viewer }), town, '/p/town/town.qgs');
    assert.deepEqual(rules?.layers, {
      roads: { hidden: ['owner', 'phone'], filter: `("kind" = 'public')` },
      secret: { read: false },
    });
    assert.equal(rules?.write, false);
    assert.equal(rules?.map, '/p/town/town.qgs');
    assert.match(rules?.key ?? '', /^viewer:/);
    assert.equal(owsRules(identity({ viewer }, true), town, 'm'), undefined, 'administrators: everything');
  });

  it('grants what any role grants: a layer one role reads, attributes one shows, features one sees', () => {
    const other: RoleDefinition = {
      projects: {
        town: {
          access: 'write',
          layers: { roads: { hidden_attributes: ['phone'], filter: `"owner" = @steward_user` } },
        },
      },
    };
    const rules = owsRules(identity({ viewer, other }), town, 'm');
    assert.deepEqual(rules?.layers, {
      roads: { hidden: ['phone'], filter: `("kind" = 'public') OR ("owner" = 'ann')` },
    });
    assert.equal(rules?.write, true, 'other may write, and WFS-T is refused only when every role refuses it');
    const open = owsRules(identity({ viewer, reader: { projects: { '*': { access: 'read' } } } }), town, 'm');
    assert.deepEqual(open?.layers, {}, 'a role without rules on the project sees it whole');
  });

  it('changes its cache key when what the roles grant changes', () => {
    const before = owsRules(identity({ viewer }), town, 'm')?.key;
    const changed = { ...viewer, projects: { town: { access: 'read' as const } } };
    assert.notEqual(owsRules(identity({ viewer: changed }), town, 'm')?.key, before);
    assert.equal(encodeOwsRules(undefined), '');
  });

  it("compiles a role set's value once per name and project, and again for changed roles", () => {
    const ann = identity({
      viewer: { projects: { town: { access: 'read', layers: { roads: { filter: '"o" = @steward_user' } } } } },
    });
    const value = owsAccessValue(ann, town, 'm');
    assert.equal(value, encodeOwsRules(owsRules(ann, town, 'm')));
    assert.equal(owsAccessValue(ann, town, 'm'), value);
    const bob = { ...ann, name: 'bob' };
    assert.match(inflateSync(Buffer.from(owsAccessValue(bob, town, 'm'), 'base64url')).toString(), /'bob'/);
    assert.notEqual(owsAccessValue(ann, town, 'other'), value);
    const changed = identity({ viewer });
    assert.equal(owsAccessValue(changed, town, 'm'), encodeOwsRules(owsRules(changed, town, 'm')));
  });

  it('names the services and operations of a request', () => {
    assert.deepEqual(owsServicesOf('wfs', 'Transaction'), ['WFS', 'WFS-T']);
    assert.deepEqual(owsServicesOf('WMS', 'getmap'), ['WMS', 'GetMap']);
    assert.deepEqual(owsServicesOf('', ''), []);
    assert.deepEqual(owsServicesOf('', '', '/ows/wfs3/collections/roads/items.json'), ['OAPIF']);
    assert.deepEqual(owsServicesOf('WMS', 'GetMap', '/ows/wfs3'), ['WMS', 'GetMap', 'OAPIF']);
  });
});
