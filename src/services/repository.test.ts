import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { after, describe, it } from '../../test/support/node-test.js';
import { raster, WGS84 } from '../../test/support/sample-layers.js';
import { ProjectDocument } from '../qgis/project.js';
import { FilesystemStore } from '../storage/filesystem-store.js';
import { estimatedBytes, LruCache } from './project-cache.js';
import { ProjectRepository } from './repository.js';

const folders: string[] = [];
after(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

function projectsDir(): string {
  const folder = mkdtempSync(join(tmpdir(), 'steward-repository-'));
  folders.push(folder);
  return folder;
}

const ref = (name: string) => ({ name, schema: 'public' });

async function createProjects(repository: ProjectRepository, names: string[]): Promise<void> {
  for (const name of names) {
    await repository.create(
      ref(name),
      ProjectDocument.create({ title: name, author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 }),
    );
  }
}

/** The estimated size of an empty project, to bound caches in numbers of projects. */
function projectBytes(): number {
  const text = ProjectDocument.create({ title: 'p0', author: 'a', creation: '2026-01-01T00:00:00', crs: WGS84 });
  return estimatedBytes(text.serialize().length);
}

/** Which of `keys` the cache holds. */
function kept(cache: LruCache<{ bytes: number }>, keys: string[]): boolean[] {
  return keys.map((key) => cache.peek(key) !== undefined);
}

describe('the least recently used cache', () => {
  it('drops the least recently used entries beyond its bound, and keeps one entry larger than it', () => {
    const cache = new LruCache<{ bytes: number }>(10);
    cache.set('a', { bytes: 4 });
    cache.set('b', { bytes: 4 });
    cache.get('a');
    cache.set('c', { bytes: 4 });
    assert.deepEqual(kept(cache, ['a', 'b', 'c']), [true, false, true]);
    assert.equal(cache.bytes, 8);
    cache.set('a', { bytes: 2 });
    assert.equal(cache.bytes, 6);
    cache.set('big', { bytes: 50 });
    assert.equal(cache.size, 1);
    assert.equal(cache.bytes, 50);
    cache.delete('big');
    assert.equal(cache.bytes, 0);
  });

  it('counts every read as a use, of the entry read last as of any other', () => {
    const cache = new LruCache<{ bytes: number }>(8);
    cache.set('a', { bytes: 4 });
    cache.set('b', { bytes: 4 });
    cache.get('b');
    cache.get('a');
    cache.get('b');
    cache.set('c', { bytes: 4 });
    assert.deepEqual(kept(cache, ['a', 'b', 'c']), [false, true, true]);
    cache.delete('c');
    cache.set('d', { bytes: 4 });
    cache.get('b');
    cache.set('e', { bytes: 4 });
    assert.deepEqual(kept(cache, ['b', 'd', 'e']), [true, false, true]);
  });
});

describe('a repository with a bounded cache', () => {
  it('keeps the projects read recently and parses the others again when read', async () => {
    const repository = new ProjectRepository(new FilesystemStore(projectsDir()), {
      cacheBytes: Math.floor(projectBytes() * 2.5),
    });
    await createProjects(repository, ['p0', 'p1', 'p2']);
    const hot = await repository.read(ref('p0'));
    const cold = await repository.read(ref('p1'));
    assert.equal(await repository.read(ref('p0')), hot);
    await repository.read(ref('p2'));
    assert.equal(await repository.read(ref('p0')), hot, 'the project read last stays cached');
    assert.equal(repository.lastSeenIdentity(ref('p1')), undefined);
    const again = await repository.read(ref('p1'));
    assert.notEqual(again, cold);
    assert.equal(again.metadata().title, 'p1');
  });

  it("sees another process's change to a project it dropped and one it kept", async () => {
    const folder = projectsDir();
    const bound = { cacheBytes: Math.floor(projectBytes() * 1.5) };
    const here = new ProjectRepository(new FilesystemStore(folder), bound);
    const there = new ProjectRepository(new FilesystemStore(folder), bound);
    await createProjects(here, ['p0', 'p1']);
    await here.read(ref('p0'));
    await here.read(ref('p1'));
    await there.update(ref('p0'), (document) => document.addLayer(raster('from_there')));
    await there.update(ref('p1'), (document) => document.addLayer(raster('also_there')));
    assert.deepEqual(
      (await here.read(ref('p0'))).layers().map((layer) => layer.name),
      ['from_there'],
    );
    assert.deepEqual(
      (await here.read(ref('p1'))).layers().map((layer) => layer.name),
      ['also_there'],
    );
  });

  it('loses no write of concurrent writers in two processes while projects are dropped', async () => {
    const folder = projectsDir();
    const bound = { cacheBytes: projectBytes() };
    const writers = [
      new ProjectRepository(new FilesystemStore(folder), bound),
      new ProjectRepository(new FilesystemStore(folder), bound),
    ];
    const names = ['p0', 'p1', 'p2'];
    await createProjects(writers[0] as ProjectRepository, names);
    const writes = writers.flatMap((writer, w) =>
      Array.from({ length: 12 }, (_, index) => {
        const project = names[index % names.length] as string;
        return writer.update(ref(project), (document) => document.addLayer(raster(`w${w}_${index}`)));
      }),
    );
    await Promise.all(writes);
    const fresh = new ProjectRepository(new FilesystemStore(folder));
    for (const [position, project] of names.entries()) {
      const expected = writers.flatMap((_, w) =>
        Array.from({ length: 12 }, (_, index) => index)
          .filter((index) => index % names.length === position)
          .map((index) => `w${w}_${index}`),
      );
      const layers = (await fresh.read(ref(project))).layers().map((layer) => layer.name);
      assert.deepEqual([...layers].sort(), [...expected].sort(), project);
      for (const writer of writers)
        assert.deepEqual((await writer.read(ref(project))).layers(), (await fresh.read(ref(project))).layers());
    }
  });
});
