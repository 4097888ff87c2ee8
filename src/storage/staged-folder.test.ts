import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { after, describe, it } from '../../test/support/node-test.js';
import { removeStaged, StagedFolder } from './staged-folder.js';

describe('StagedFolder', () => {
  const root = mkdtempSync(join(tmpdir(), 'steward-staged-folder-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  async function staged(parent: string): Promise<StagedFolder> {
    const folder = new StagedFolder(() => parent);
    writeFileSync(await folder.pathFor('data/roads.gpkg'), 'x');
    return folder;
  }

  it('discarded, takes the folder made for it along, and leaves no trace', async () => {
    const parent = join(root, 'refused');
    await (await staged(parent)).discard();
    assert.ok(!existsSync(parent));
  });

  it('discarded, keeps the folder it was in while another upload or a revision is there', async () => {
    const parent = join(root, 'shared');
    const first = await staged(parent);
    const second = await staged(parent);
    await first.discard();
    assert.equal(readdirSync(parent).length, 1, "the other upload's folder stays");
    const kept = await second.keep('20261205T130301Z-1a2b3c');
    await (await staged(parent)).discard();
    assert.deepEqual(readdirSync(parent), ['20261205T130301Z-1a2b3c']);
    assert.ok(existsSync(join(kept, 'data', 'roads.gpkg')));
  });

  it('a kept folder removed takes the folder it is in along once that is empty', async () => {
    const parent = join(root, 'kept');
    const kept = await (await staged(parent)).keep('20261205T130301Z-4d5e6f');
    await removeStaged(kept);
    assert.ok(!existsSync(parent));
  });
});
