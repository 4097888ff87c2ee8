/**
 * `steward instances`, `instance`, `reload` and `check` against a real API and two real QGIS
 * Servers with the plugin: one keeps projects with bad layers (QGIS_SERVER_IGNORE_BAD_LAYERS), the
 * other refuses them. The faults are real: a GeoPackage deleted, an instance that stops answering.
 */
import assert from 'node:assert/strict';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import type { InstanceAbout, InstanceMetadata, InstanceProjects } from '../src/monitor/protocol.js';
import type { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { steward } from './support/cli.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { type InsightStack, startInsightStack } from './support/insight-stack.js';
import { after, before, describe, it } from './support/node-test.js';
import { waitFor } from './support/wait.js';

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('steward instances, instance, reload and check against real QGIS Servers', () => {
  let data: Fixtures;
  let stack: InsightStack;
  let env: NodeJS.ProcessEnv;
  let tolerant: { id: string; qgis: QgisServerProcess };
  let strict: { id: string; qgis: QgisServerProcess };
  let beta = '';

  const get = async <T>(path: string) => (await stack.call('GET', path)).body as T;
  const cachedCount = async (id: string) =>
    (await get<InstanceProjects>(`/api/instances/${id}/projects`)).projects.length;

  before(async () => {
    data = makeFixtures();
    stack = await startInsightStack({ STEWARD_PINNED_PROJECTS: 'alpha' });
    env = { STEWARD_SERVER_URL: stack.api.url };
    beta = join(stack.workDir, 'beta.gpkg');
    copyFileSync(data.geopackage, beta);
    for (const [name, geopackage] of [
      ['alpha', data.geopackage],
      ['beta', beta],
    ] as const) {
      assert.equal((await stack.call('POST', '/api/projects', { name, author: 'cli' })).status, 201);
      const layer = { type: 'vector', name: 'polygons', datasource: `${geopackage}|layername=polygons` };
      assert.equal((await stack.call('POST', `/api/projects/${name}/layers`, layer)).status, 201);
    }
    tolerant = await stack.startQgis({ QGIS_SERVER_IGNORE_BAD_LAYERS: 'true' }, stack.qgisPort);
    strict = await stack.startQgis();
  });
  after(async () => {
    await stack?.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('lists each instance with its host, version, cached and pinned projects, memory, uptime and load', async () => {
    for (const { id } of [tolerant, strict])
      await waitFor('the pinned project', async () => (await cachedCount(id)) === 1);
    const listed = await steward(['instances'], env);
    assert.equal(listed.code, 0, listed.err);
    const [header, ...rows] = listed.out.trimEnd().split('\n');
    assert.match(header ?? '', /^INSTANCE ID\s+HOST\s+VERSION\s+PROJECTS\s+PINNED\s+MEMORY\s+UPTIME\s+LOAD$/);
    assert.equal(rows.length, 2);
    for (const { id } of [tolerant, strict]) {
      const version = (await get<InstanceMetadata>(`/api/instances/${id}`)).versions.qgis;
      const row = new RegExp(
        `^${id}\\s+127\\.0\\.0\\.1\\s+${escape(version)}\\s+1\\s+1/1\\s+\\d+ MiB\\s+\\d+(m\\d\\d)?s\\s+[\\d.]+ [\\d.]+ [\\d.]+$`,
      );
      assert.ok(
        rows.some((line) => row.test(line)),
        `${row} in\n${listed.out}`,
      );
    }
    const json = JSON.parse((await steward(['instances', '--json'], env)).out) as {
      id: string;
      answer: { projects_cached: number; pinned_cached: number; memory_bytes: number };
    }[];
    const pids = await Promise.all(
      json.map(async ({ id }) => (await get<InstanceAbout>(`/api/instances/${id}/about`)).process.pid),
    );
    assert.deepEqual(pids.sort(), [tolerant.qgis.child.pid, strict.qgis.child.pid].sort());
    assert.ok(
      json.every(
        ({ answer }) =>
          answer.projects_cached === 1 && answer.pinned_cached === 1 && answer.memory_bytes > 10 * 1024 * 1024,
      ),
    );
  });

  it('shows an instance: about (versions, providers, plugins, fonts), settings with their source', async () => {
    const metadata = await get<InstanceMetadata>(`/api/instances/${tolerant.id}`);
    const about = await get<InstanceAbout>(`/api/instances/${tolerant.id}/about`);
    const shown = await steward(['instance', tolerant.id], env);
    assert.equal(shown.code, 0, shown.err);
    assert.match(shown.out, new RegExp(`^QGIS +${escape(metadata.versions.qgis)}$`, 'm'));
    assert.match(shown.out, new RegExp(`^GDAL +${escape(metadata.versions.gdal)}$`, 'm'));
    assert.match(shown.out, /^Providers +.*\bogr\b.*$/m);
    assert.match(shown.out, /^Providers +.*\bpostgres\b.*$/m);
    assert.match(shown.out, /^Plugins +.*\bsteward_monitor\b/m);
    assert.match(shown.out, new RegExp(`^Fonts +${about.fonts.length} families$`, 'm'));
    assert.match(shown.out, new RegExp(`^Process +pid ${tolerant.qgis.child.pid}, up `, 'm'));
    assert.ok(about.fonts.length > 0);
    const tolerantSettings = await steward(['instance', tolerant.id, 'settings'], env);
    assert.match(tolerantSettings.out, /^QGIS_SERVER_IGNORE_BAD_LAYERS\s+true\s+environment$/m);
    const strictSettings = await steward(['instance', strict.id, 'settings'], env);
    assert.match(strictSettings.out, /^QGIS_SERVER_IGNORE_BAD_LAYERS\s+false\s+default$/m);
    assert.match(strictSettings.out, /^ini file: \//);
    const bad = await steward(['instance', strict.id, 'plugins'], env);
    assert.deepEqual(
      [bad.code, bad.err],
      [1, 'steward: steward instance: the view is projects, settings or about, not "plugins"\n'],
    );
    const unknown = await steward(['instance', 'nowhere'], env);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /^steward: .+\n$/);
  });

  it('reloads on every instance, naming the refusal (exit 1), the invalid layer and the check; all clear once repaired', async () => {
    rmSync(beta);
    const reloaded = await steward(['reload', 'beta'], env);
    assert.equal(reloaded.code, 1, reloaded.out);
    assert.match(reloaded.out, new RegExp(`^${tolerant.id}\\s+reloaded\\s+1\\s+polygons$`, 'm'));
    assert.match(
      reloaded.out,
      new RegExp(`^${strict.id}\\s+refused\\s+-\\s+-\\s+QGIS Server threw QgsServerException`, 'm'),
    );
    const cached = await steward(['instance', tolerant.id, 'projects'], env);
    assert.match(cached.out, /^MAP\s+TITLE\s+LOADED\s+LAYERS\s+INVALID LAYERS\s+PINNED$/m);
    assert.match(cached.out, /^\S+\/beta\.qgs\s+.*\s1\s+polygons\s+no$/m);
    assert.match(cached.out, /^\S+\/alpha\.qgs\s+.*\s1\s+-\s+yes$/m);
    assert.doesNotMatch((await steward(['instance', strict.id, 'projects'], env)).out, /beta\.qgs/);
    const checked = await steward(['check', 'beta'], env);
    assert.equal(checked.code, 1, checked.out);
    assert.match(checked.out, /^beta\s+(degraded|broken)$/m);
    assert.match(checked.out, /^\s+polygons\s+datasource\s+/m);
    const all = await steward(['check'], env);
    assert.equal(all.code, 1);
    assert.match(all.out, /^alpha\s+ok$/m);

    copyFileSync(data.geopackage, beta);
    const repaired = await steward(['reload', 'beta'], env);
    assert.equal(repaired.code, 0, repaired.out);
    for (const { id } of [tolerant, strict])
      assert.match(repaired.out, new RegExp(`^${id}\\s+reloaded\\s+1\\s+-$`, 'm'));
    assert.match((await steward(['instance', tolerant.id, 'projects'], env)).out, /^\S+\/beta\.qgs\s+.*\s1\s+-\s+no$/m);
    const clear = await steward(['check'], env);
    assert.equal(clear.code, 0, clear.out);
    assert.match(clear.out, /^beta\s+ok$/m);
    const missing = await steward(['reload', 'nowhere'], env);
    assert.deepEqual(
      [missing.code, missing.err],
      [1, 'steward: Project nowhere does not exist. [project_not_found]\n'],
    );
  });

  it('names an instance that stops answering: its reload failed (exit 1), its row an error', async () => {
    strict.qgis.child.kill('SIGSTOP');
    try {
      const reloaded = await steward(['reload', 'alpha'], env);
      assert.equal(reloaded.code, 1, reloaded.out);
      assert.match(reloaded.out, new RegExp(`^${tolerant.id}\\s+reloaded\\s+1\\s+-$`, 'm'));
      assert.match(reloaded.out, new RegExp(`^${strict.id}\\s+failed\\s+-\\s+-\\s+\\S.*$`, 'm'));
      const listed = await steward(['instances'], env);
      assert.equal(listed.code, 0);
      assert.match(listed.out, new RegExp(`^${strict.id}(\\s+-){5}\\s+\\S.*$`, 'm'));
    } finally {
      strict.qgis.child.kill('SIGCONT');
    }
    const again = await steward(['reload', 'alpha'], env);
    assert.equal(again.code, 0, again.out);
  });
});
