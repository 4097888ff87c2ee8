import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';

import { identityOf } from '../../test/support/identities.js';
import { describe, it } from '../../test/support/node-test.js';
import { encodeOwsRules, owsAccessValue, owsRules, owsServicesOf } from './ows-rules.js';
import { type RoleDefinition } from './records.js';

const town = { name: 'town', schema: 'public' };

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
    const rules = owsRules(identityOf({ viewer }), town, '/p/town/town.qgs');
    assert.deepEqual(rules?.layers, {
      roads: { hidden: ['owner', 'phone'], filter: `("kind" = 'public')` },
      secret: { read: false },
    });
    assert.equal(rules?.write, false);
    assert.equal(rules?.map, '/p/town/town.qgs');
    assert.match(rules?.key ?? '', /^viewer:/);
    assert.equal(owsRules(identityOf({ viewer }, { admin: true }), town, 'm'), undefined, 'administrators: everything');
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
    const rules = owsRules(identityOf({ viewer, other }), town, 'm');
    assert.deepEqual(rules?.layers, {
      roads: { hidden: ['phone'], filter: `("kind" = 'public') OR ("owner" = 'ann')` },
    });
    assert.equal(rules?.write, true, 'other may write, and WFS-T is refused only when every role refuses it');
    const open = owsRules(identityOf({ viewer, reader: { projects: { '*': { access: 'read' } } } }), town, 'm');
    assert.deepEqual(open?.layers, {}, 'a role without rules on the project sees it whole');
  });

  it('changes its cache key when what the roles grant changes', () => {
    const before = owsRules(identityOf({ viewer }), town, 'm')?.key;
    const changed = { ...viewer, projects: { town: { access: 'read' as const } } };
    assert.notEqual(owsRules(identityOf({ viewer: changed }), town, 'm')?.key, before);
    assert.equal(encodeOwsRules(undefined), '');
  });

  it("compiles a role set's value once per name and project, and again for changed roles", () => {
    const ann = identityOf({
      viewer: { projects: { town: { access: 'read', layers: { roads: { filter: '"o" = @steward_user' } } } } },
    });
    const value = owsAccessValue(ann, town, 'm');
    assert.equal(value, encodeOwsRules(owsRules(ann, town, 'm')));
    assert.equal(owsAccessValue(ann, town, 'm'), value);
    const bob = { ...ann, name: 'bob' };
    assert.match(inflateSync(Buffer.from(owsAccessValue(bob, town, 'm'), 'base64url')).toString(), /'bob'/);
    assert.notEqual(owsAccessValue(ann, town, 'other'), value);
    const changed = identityOf({ viewer });
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
