/**
 * A full disk on a real small file system (a tmpfs mounted for the test): 507 naming the disk,
 * readiness failing under STEWARD_MIN_FREE_SPACE, and a create or an upload that failed leaving
 * nothing behind.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { strToU8, zipSync } from 'fflate';

import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { apiCall } from './support/http.js';
import { after, before, describe, test } from './support/node-test.js';
import { mountTmpfs, type Tmpfs } from './support/tmpfs.js';

const MIB = 1024 * 1024;

interface Readiness {
  checks: Record<string, { ok: boolean; detail: string }>;
}

/** The API alone (QGIS Server is not asked here), its projects and tile cache folders as told. */
async function startApi(env: Record<string, string>): Promise<RunningServer> {
  return startServer(
    loadConfig({
      STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/',
      STEWARD_QGISSERVER_VERSION: '3.22',
      STEWARD_LOGLEVEL: 'ERROR',
      STEWARD_LISTEN: '127.0.0.1:0',
      ...env,
    }),
  );
}

describe('a full disk', () => {
  let disk: Tmpfs;
  let elsewhere = '';

  before(async () => {
    disk = await mountTmpfs(4 * MIB);
    elsewhere = await mkdtemp(join(tmpdir(), 'steward-full-disk-'));
  });
  after(async () => {
    await disk.unmount();
    await rm(elsewhere, { recursive: true, force: true });
  });

  test('a project create on it answers 507 naming the disk, leaves nothing, and a retry succeeds', async () => {
    const projects = join(disk.dir, 'projects');
    const api = await startApi({ STEWARD_QGISSERVER_PROJECTS_DIR: projects });
    const call = (method: string, path: string, body?: unknown) => apiCall(api.url, method, path, body);
    try {
      assert.equal((await call('POST', '/api/projects', { name: 'first', author: 'test' })).status, 201);
      const filler = await disk.fill();
      try {
        const reply = await call('POST', '/api/projects', { name: 'second', author: 'test' });
        assert.equal(reply.status, 507);
        assert.deepEqual(reply.body, {
          error: `insufficient storage: the disk mounted at ${disk.dir} is full`,
          code: 'disk_full',
        });
        const changed = await call('PATCH', '/api/projects/first', { title: 'x'.repeat(4000) });
        assert.equal(changed.status, 507, `a write to a project is 507 as well: ${JSON.stringify(changed)}`);
        const info = await call('GET', '/api/projects/first');
        assert.equal((info.body as { title: string }).title, 'first', 'and leaves the project as it was');
        assert.deepEqual((await call('GET', '/api/projects')).body, ['first']);
        assert.deepEqual(
          (await readdir(projects)).filter((name) => name.includes('second')),
          [],
          'no staging folder left',
        );
      } finally {
        await rm(filler);
      }
      assert.equal((await call('POST', '/api/projects', { name: 'second', author: 'test' })).status, 201);
      assert.deepEqual((await call('GET', '/api/projects')).body, ['first', 'second']);
    } finally {
      await api.close();
    }
  });

  test('a create whose tile cache configuration finds the disk full is rolled back', async () => {
    const projects = join(elsewhere, 'projects');
    const cache = join(disk.dir, 'mapproxy');
    const api = await startApi({ STEWARD_QGISSERVER_PROJECTS_DIR: projects, STEWARD_MAPPROXY_PROJECTS_DIR: cache });
    const call = (method: string, path: string, body?: unknown) => apiCall(api.url, method, path, body);
    try {
      const filler = await disk.fill();
      try {
        const reply = await call('POST', '/api/projects', { name: 'cached', author: 'test' });
        assert.equal(reply.status, 507, JSON.stringify(reply.body));
        assert.match((reply.body as { error: string }).error, new RegExp(`insufficient storage: .*${disk.dir}`));
        assert.deepEqual((await call('GET', '/api/projects')).body, [], 'not listed');
        assert.equal((await call('GET', '/api/projects/cached')).status, 404);
      } finally {
        await rm(filler);
      }
      assert.equal((await call('POST', '/api/projects', { name: 'cached', author: 'test' })).status, 201, 'a retry');
      assert.deepEqual((await call('GET', '/api/projects')).body, ['cached']);
    } finally {
      await api.close();
    }
  });

  /**
   * PUTs `upload` to `path` of an API whose upload root, `name`, is on the disk, with its length
   * declared, then chunked: 507 naming the disk each time, and nothing of it left in the upload root.
   */
  async function refusedForSpace(name: string, path: string, upload: Uint8Array<ArrayBuffer>): Promise<void> {
    const uploads = join(disk.dir, name);
    await mkdir(uploads);
    const api = await startApi({
      STEWARD_QGISSERVER_PROJECTS_DIR: join(elsewhere, name),
      STEWARD_UPLOAD_ROOT: uploads,
      STEWARD_DATA_ROOTS: uploads,
    });
    // Its length declared, the body is read by the thread that receives uploads; chunked, by the event loop.
    const bodies: Array<[string, () => BodyInit]> = [
      ['declared', () => Buffer.from(upload)],
      ['chunked', () => new Blob([upload]).stream()],
    ];
    try {
      for (const [how, body] of bodies) {
        const reply = await fetch(`${api.url}${path}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/zip' },
          body: body(),
          duplex: 'half',
        } as RequestInit);
        assert.equal(reply.status, 507, how);
        assert.deepEqual(await reply.json(), {
          error: `insufficient storage: the disk mounted at ${disk.dir} is full`,
          code: 'disk_full',
        });
        assert.deepEqual(await readdir(uploads), [], `${how}: nothing of the upload is left`);
      }
    } finally {
      await api.close();
    }
  }

  test('a bundle whose data files do not fit the upload root answers 507 naming the disk, and leaves nothing', async () => {
    const bundle = zipSync({ 'project.qgs': strToU8('<qgis/>'), 'data/large.bin': randomBytes(6 * MIB) }, { level: 0 });
    await refusedForSpace('uploads', '/api/projects/bundled/archive', bundle);
  });

  test('a data file that does not fit the upload root answers 507 naming the disk, and leaves nothing', async () => {
    await refusedForSpace('data-uploads', '/api/data/rasters/large.tif', randomBytes(6 * MIB));
  });

  test('readiness fails its disk check under STEWARD_MIN_FREE_SPACE, naming the mount', async () => {
    const projects = join(disk.dir, 'ready');
    const ready = async (minFree: string) => {
      const api = await startApi({ STEWARD_QGISSERVER_PROJECTS_DIR: projects, STEWARD_MIN_FREE_SPACE: minFree });
      try {
        return await apiCall(api.url, 'GET', '/health/ready');
      } finally {
        await api.close();
      }
    };
    const low = await ready('1M');
    const disk1 = (low.body as Readiness).checks['disk'];
    assert.equal(disk1?.ok, true, JSON.stringify(disk1));
    assert.match(disk1?.detail ?? '', new RegExp(`${disk.dir} has [0-9.]+ MiB free`));
    const high = await ready('5M');
    assert.equal(high.status, 503);
    const disk2 = (high.body as Readiness & { error: string }).checks['disk'];
    assert.equal(disk2?.ok, false);
    assert.match(disk2?.detail ?? '', new RegExp(`under 5\\.0 MiB \\(STEWARD_MIN_FREE_SPACE\\) on ${disk.dir}`));
    assert.match((high.body as { error: string }).error, /disk space/);
  });
});
