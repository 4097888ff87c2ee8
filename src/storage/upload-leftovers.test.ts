import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { after, describe, it } from '../../test/support/node-test.js';
import { ABANDONED_AFTER_MS, clearUploadLeftovers, isUploadTemporary } from './upload-leftovers.js';

describe('upload leftovers', () => {
  const root = mkdtempSync(join(tmpdir(), 'steward-upload-leftovers-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  function file(path: string, ageMs: number): string {
    const full = join(root, path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, 'x');
    const when = (Date.now() - ageMs) / 1000;
    utimesSync(full, when, when);
    return full;
  }

  it('knows the names uploads write as they arrive, and no other', () => {
    const uuid = randomUUID();
    assert.ok(isUploadTemporary(`.upload.${uuid}.tmp`));
    assert.ok(isUploadTemporary(`.${uuid}.roads.gpkg`));
    for (const name of ['roads.gpkg', '.upload.tmp', `upload.${uuid}.tmp`, `.${uuid}`, '.hidden.gpkg'])
      assert.ok(!isUploadTemporary(name), name);
  });

  it('removes abandoned upload files at any depth, and keeps uploads in progress and data', async () => {
    const old = ABANDONED_AFTER_MS + 60_000;
    const abandoned = [file(`.upload.${randomUUID()}.tmp`, old), file(`town/.${randomUUID()}.roads.gpkg`, old)];
    const kept = [
      file(`.upload.${randomUUID()}.tmp`, 1000),
      file(`town/.${randomUUID()}.dem.tif`, 1000),
      file('town/roads.gpkg', old),
      file('.hidden-data.gpkg', old),
    ];
    assert.equal(await clearUploadLeftovers(root), 2);
    for (const path of abandoned) assert.ok(!existsSync(path), path);
    for (const path of kept) assert.ok(existsSync(path), path);
  });

  it("removes a bundle's abandoned staged folder whole, and keeps one being written", async () => {
    const staged = (ageMs: number): string => {
      const folder = join(root, 'bundle', `.upload.${randomUUID()}.tmp`);
      file(join(folder.slice(root.length + 1), 'data', 'roads.gpkg'), ageMs);
      const when = (Date.now() - ageMs) / 1000;
      utimesSync(folder, when, when);
      return folder;
    };
    const abandoned = staged(ABANDONED_AFTER_MS + 60_000);
    const writing = staged(1000);
    assert.equal(await clearUploadLeftovers(join(root, 'bundle')), 1);
    assert.ok(!existsSync(abandoned));
    assert.ok(existsSync(join(writing, 'data', 'roads.gpkg')));
  });

  it('answers 0 for a folder that does not exist', async () => {
    assert.equal(await clearUploadLeftovers(join(root, 'missing')), 0);
  });
});
