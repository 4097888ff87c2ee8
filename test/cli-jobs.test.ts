import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';

import { type CacheStack, polygonsLayer, startCacheStack } from './support/cache-stack.js';
import { steward } from './support/cli.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { type JobReply, waitForJob } from './support/seeding.js';

describe('steward seed, jobs and job against the real API', () => {
  let cs: CacheStack;
  let data: Fixtures;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    [data, cs] = [makeFixtures(), await startCacheStack()];
    env = { STEWARD_SERVER_URL: cs.stack.api.url };
    await cs.stack.call('POST', '/api/projects/', { name: 'cli', author: 'test' });
    await cs.stack.call('POST', '/api/projects/cli/layers', polygonsLayer(data));
  });
  after(async () => {
    await cs.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('seeds with a progress bar to 100%, and lists the job', async () => {
    const seeded = await steward(['seed', 'cli', '--levels', '0-3', '--watch'], env);
    assert.equal(seeded.code, 0, seeded.err);
    const lines = seeded.out.trimEnd().split('\n');
    assert.match(lines.at(-1) ?? '', /^\[#{30}\] 100% {2}100\/100 {2}succeeded$/);
    const listed = await steward(['jobs'], env);
    assert.equal(listed.code, 0);
    const [header, row] = listed.out.trimEnd().split('\n');
    assert.match(header ?? '', /^JOB ID\s+KIND\s+PROJECT\s+STATE\s+PROGRESS/);
    assert.match(row ?? '', /^[0-9a-f-]{36}\s+seed\s+cli\s+succeeded\s+100%/);
  });

  it('exits 1 when the followed job fails; bad levels or a valueless option start no job', async () => {
    const reply = await cs.stack.call('POST', '/api/projects/cli/cache/seed', {
      min_zoom: 0,
      max_zoom: 1,
      extent: [0, 0, 1, 1],
      extent_crs: 'EPSG:999999',
    });
    const id = (reply.body as JobReply).id;
    const followed = await steward(['job', id, '--watch'], env);
    assert.equal(followed.code, 1);
    assert.match(followed.err, new RegExp(`^steward: job ${id} failed: mapproxy-seed`));
    assert.equal((await waitForJob((m, p, b) => cs.stack.call(m, p, b), id)).state, 'failed');
    const bad = await steward(['seed', 'cli', '--levels', 'all'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /--levels must look like 0-8/);
    const jobs = (await steward(['jobs', '--json'], env)).out;
    const unfinished = await steward(['seed', 'cli', '--levels', '0-3', '--schema'], env);
    assert.equal(unfinished.code, 2);
    assert.match(unfinished.err, /^steward seed: Option '--schema <value>' argument missing\n/);
    assert.equal((await steward(['jobs', '--json'], env)).out, jobs, 'no job started');
  });
});
