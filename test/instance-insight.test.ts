/**
 * What a real QGIS Server instance reports through the plugin: the projects in its cache (a pinned
 * one loaded before any client asked, an invalid layer after its GeoPackage was deleted), its
 * settings and their sources, its fonts and its process; a project reloaded on every instance, or
 * dropped by QGIS Server when its file changed; and an instance killed, as the instance views and
 * /health/ready show it.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { type ProjectCheck } from '../src/insight/checks.js';
import { type InstanceReload } from '../src/insight/project-fleet.js';
import type { InstanceAbout, InstanceMetadata, InstanceProjects, InstanceStats } from '../src/monitor/protocol.js';
import { installedFontFamilies } from '../src/runtime/fonts.js';
import type { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { type InsightStack, startInsightStack } from './support/insight-stack.js';
import { after, before, describe, it } from './support/node-test.js';
import { waitFor } from './support/wait.js';

const CACHE_SIZE_IN_INI = 123456789;

describe('instance insight through the plugin', () => {
  let data: Fixtures;
  let stack: InsightStack;
  let workDir = '';
  let qgis: QgisServerProcess;
  let id = '';

  const call = async <T>(method: string, path: string, body?: unknown) =>
    (await stack.call(method, path, body)) as { status: number; body: T };
  const get = <T>(path: string) => call<T>('GET', path);
  const cached = async () => (await get<InstanceProjects>(`/api/instances/${id}/projects`)).body.projects;
  const cachedProject = async (name: string) => (await cached()).find(({ map }) => map.endsWith(`/${name}.qgs`));

  before(async () => {
    data = makeFixtures();
    stack = await startInsightStack({ STEWARD_PINNED_PROJECTS: 'alpha' });
    workDir = stack.workDir;
    const optionsDir = join(workDir, 'options');
    mkdirSync(join(optionsDir, 'QGIS'), { recursive: true });
    writeFileSync(join(optionsDir, 'QGIS', 'QGIS3.ini'), `[cache]\nsize=${CACHE_SIZE_IN_INI}\n`);
    const beta = join(workDir, 'beta.gpkg');
    copyFileSync(data.geopackage, beta);
    for (const [name, geopackage] of [
      ['alpha', data.geopackage],
      ['beta', beta],
    ] as const) {
      assert.equal((await call('POST', '/api/projects', { name, author: 'insight' })).status, 201);
      const layer = { type: 'vector', name: 'polygons', datasource: `${geopackage}|layername=polygons` };
      assert.equal((await call('POST', `/api/projects/${name}/layers`, layer)).status, 201);
    }
    ({ qgis, id } = await stack.startQgis(
      { QGIS_OPTIONS_PATH: optionsDir, QGIS_SERVER_IGNORE_BAD_LAYERS: 'true' },
      stack.qgisPort,
    ));
  });

  after(async () => {
    await stack?.stop();
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('has the pinned project loaded before any client asked for it', async () => {
    const alpha = await waitFor('the pinned project', () => cachedProject('alpha'), 10_000);
    assert.equal(alpha.layers, 1);
    assert.deepEqual(alpha.invalid_layers, []);
    assert.ok(Date.now() - Date.parse(alpha.loaded) < 60_000, `loaded ${alpha.loaded}`);
    assert.equal((await get<InstanceStats>(`/api/instances/${id}/stats`)).body.count, 0, 'no request served');
    assert.equal(await cachedProject('beta'), undefined);
  });

  it('reports each setting with its source, the fonts, the process, providers and plugins', async () => {
    const { status, body } = await get<InstanceAbout>(`/api/instances/${id}/about`);
    assert.equal(status, 200);
    const setting = (name: string) => body.settings.values.find((entry) => entry.name === name);
    assert.deepEqual(setting('QGIS_SERVER_IGNORE_BAD_LAYERS'), {
      name: 'QGIS_SERVER_IGNORE_BAD_LAYERS',
      value: true,
      source: 'environment',
    });
    assert.deepEqual(setting('QGIS_SERVER_CACHE_SIZE'), {
      name: 'QGIS_SERVER_CACHE_SIZE',
      value: CACHE_SIZE_IN_INI,
      source: 'ini',
    });
    assert.deepEqual(setting('QGIS_SERVER_TRUST_LAYER_METADATA'), {
      name: 'QGIS_SERVER_TRUST_LAYER_METADATA',
      value: false,
      source: 'default',
    });
    assert.equal(body.settings.ini_file, join(workDir, 'options', 'QGIS', 'QGIS3.ini'));
    const installed = await installedFontFamilies();
    for (const family of ['DejaVu Sans', 'DejaVu Serif']) {
      assert.ok(installed.has(family.toLowerCase()) && body.fonts.includes(family), body.fonts.join(', '));
    }
    assert.ok(!installed.has('comic sans ms') && !body.fonts.includes('Comic Sans MS'));
    assert.equal(body.process.pid, qgis.child.pid);
    assert.ok(body.process.memory_bytes > 10 * 1024 * 1024, `${body.process.memory_bytes} bytes resident`);
    assert.ok(body.process.peak_memory_bytes >= body.process.memory_bytes);
    assert.ok(body.process.uptime_seconds >= 0 && body.process.uptime_seconds < 600);
    assert.ok(body.process.cpus >= 1 && body.process.load['1m'] >= 0);
    const metadata = (await get<InstanceMetadata>(`/api/instances/${id}`)).body;
    assert.ok(metadata.providers.includes('ogr') && metadata.providers.includes('postgres'));
    assert.ok(metadata.plugins.includes('steward_monitor'));
  });

  it('lists a project once a client asked for it, and its invalid layer once its GeoPackage is gone', async () => {
    const map = await fetch(`${stack.api.url}/api/projects/beta/layers/polygons/map`);
    assert.equal(map.headers.get('content-type'), 'image/png');
    await map.arrayBuffer();
    const beta = await waitFor('beta in the cache', () => cachedProject('beta'));
    assert.deepEqual([beta.layers, beta.invalid_layers], [1, []]);
    rmSync(join(workDir, 'beta.gpkg'));
    const [reload] = (await call<{ instances: InstanceReload[] }>('POST', '/api/projects/beta/reload')).body.instances;
    assert.equal(reload?.instance, id);
    assert.equal(reload?.status, 'reloaded');
    assert.deepEqual(reload?.project?.invalid_layers, ['polygons']);
    assert.deepEqual((await cachedProject('beta'))?.invalid_layers, ['polygons']);
    const check = (await get<ProjectCheck>('/api/projects/beta/check')).body;
    const server = (findings: ProjectCheck['findings']) => findings.filter(({ kind }) => kind === 'server');
    assert.deepEqual(server(check.layers[0]?.findings ?? []), [
      { kind: 'server', message: `instance ${id} holds layer "polygons" as not valid` },
    ]);
    copyFileSync(data.geopackage, join(workDir, 'beta.gpkg'));
    await call('POST', '/api/projects/beta/reload');
    assert.deepEqual((await cachedProject('beta'))?.invalid_layers, []);
    assert.deepEqual(server((await get<ProjectCheck>('/api/projects/beta/check')).body.layers[0]?.findings ?? []), []);
  });

  it('reloads a project on every instance, which then holds its new layers', async () => {
    const layer = { type: 'vector', name: 'lines', datasource: `${data.shapefile}` };
    assert.equal((await call('POST', '/api/projects/alpha/layers', layer)).status, 201);
    const { status, body } = await call<{ instances: InstanceReload[] }>('POST', '/api/projects/alpha/reload');
    assert.equal(status, 200);
    assert.deepEqual(
      body.instances.map(({ instance, status: outcome, project }) => [instance, outcome, project?.layers]),
      [[id, 'reloaded', 2]],
    );
    assert.equal((await cachedProject('alpha'))?.layers, 2);
    assert.equal((await call('POST', '/api/projects/nowhere/reload')).status, 404);
  });

  it('forgets a project QGIS Server dropped on its own (its file changed) until it serves it again', async () => {
    const getMap = async () => (await fetch(`${stack.api.url}/api/projects/alpha/layers/polygons/map`)).arrayBuffer();
    await getMap();
    assert.equal((await cachedProject('alpha'))?.layers, 2);
    const layer = { type: 'vector', name: 'points', datasource: `${data.geopackage}|layername=points` };
    assert.equal((await call('POST', '/api/projects/alpha/layers', layer)).status, 201);
    await waitFor('alpha to leave the cache', async () => (await cachedProject('alpha')) === undefined);
    await getMap();
    assert.equal((await cachedProject('alpha'))?.layers, 3);
  });

  it('shows an instance killed: gone from the views, no reload answer, QGIS Server down in /health/ready', async () => {
    const exited = once(qgis.child, 'exit');
    qgis.child.kill('SIGKILL');
    await exited;
    await waitFor(
      'the instance to be forgotten',
      async () => (await get<{ servers: unknown[] }>('/api/instances')).body.servers.length === 0,
    );
    assert.equal((await get(`/api/instances/${id}/projects`)).status, 404);
    assert.deepEqual((await call('POST', '/api/projects/alpha/reload')).body, { instances: [] });
    const ready = await get<{ status: string; error: string }>('/health/ready');
    assert.equal(ready.status, 503);
    assert.match(ready.body.error, /QGIS Server/);
  });
});
