import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';

import { describe, it } from '../../test/support/node-test.js';
import { scratchFolder } from '../../test/support/scratch.js';
import { FilesystemAccessStore } from './filesystem-access.js';
import { owsAccessValue } from './ows-rules.js';
import { type RoleDefinition } from './records.js';
import { AccessService, type Identity } from './service.js';

const town = { name: 'town', schema: 'public' };
const MAP = '/p/town/town.qgs';

function filtered(filter: string): RoleDefinition {
  return { projects: { town: { access: 'read', layers: { roads: { filter } } } } };
}

/** The rules QGIS Server is handed for `identity` in the town, as JSON. */
function rulesText(identity: Identity): string {
  return inflateSync(Buffer.from(owsAccessValue(identity, town, MAP), 'base64url')).toString();
}

describe('the permissions of role sets across readings of the roles', () => {
  it('keeps those of unchanged roles, with their compiled rules, and makes those of changed ones again', async () => {
    const projectsDir = scratchFolder('steward-access-service-');
    const store = new FilesystemAccessStore(projectsDir);
    await store.putRole('viewer', filtered(`"kind" = 'public'`));
    await store.putRole('editor', filtered(`"kind" = 'draft'`));
    const access = new AccessService('bootstrap secret', store);
    await access.start();
    try {
      const viewer = await access.createToken({ name: 'ann', roles: ['viewer'] });
      const editor = await access.createToken({ name: 'bob', roles: ['editor'] });
      const identify = async (token: string): Promise<Identity> => {
        const identity = await access.identify(token);
        assert.ok(identity, 'the token is known');
        return identity;
      };
      const viewerBefore = await identify(viewer.token);
      const editorBefore = await identify(editor.token);
      assert.match(rulesText(viewerBefore), /'public'/);

      await access.refresh();
      assert.equal((await identify(viewer.token)).permissions, viewerBefore.permissions, 'roles read again unchanged');

      // Another process changes one of the roles.
      await new FilesystemAccessStore(projectsDir).putRole('viewer', filtered(`"kind" = 'open'`));
      await access.refresh();
      const viewerAfter = await identify(viewer.token);
      assert.notEqual(viewerAfter.permissions, viewerBefore.permissions, 'a changed role is applied');
      assert.match(rulesText(viewerAfter), /'open'/);
      assert.doesNotMatch(rulesText(viewerAfter), /'public'/);
      assert.equal((await identify(editor.token)).permissions, editorBefore.permissions, 'the other role is unchanged');

      await store.removeRole('editor');
      await access.refresh();
      const editorAfter = await identify(editor.token);
      assert.equal(editorAfter.permissions.may(town, 'read'), false, 'a removed role grants nothing');
    } finally {
      await access.close();
    }
  });
});

describe('a verified token', () => {
  it('is known without its slow hash while it is used at least once a minute, and not once unused for longer', async () => {
    const store = new FilesystemAccessStore(scratchFolder('steward-access-verified-'));
    await store.putRole('viewer', filtered(`"kind" = 'public'`));
    let now = Date.now();
    const access = new AccessService('bootstrap secret', store, { now: () => now });
    await access.start();
    try {
      const { token } = await access.createToken({ name: 'ann', roles: ['viewer'] });
      assert.equal(access.knownIdentity(token), undefined, 'not verified yet');
      assert.ok(await access.identify(token));
      for (let minute = 0; minute < 5; minute++) {
        now += 50_000;
        assert.equal(access.knownIdentity(token)?.name, 'ann', `known after ${minute + 1} uses 50 s apart`);
      }
      now += 61_000;
      assert.equal(access.knownIdentity(token), undefined, 'unused for more than a minute: its slow hash again');
      assert.ok(await access.identify(token));
      assert.equal(access.knownIdentity(token)?.name, 'ann');
    } finally {
      await access.close();
    }
  });
});
