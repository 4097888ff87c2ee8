/**
 * GET /metrics scraped by a real Prometheus (Debian's package): the GetMaps the test makes through
 * the API show in the API's request counter and in the GetMap count the instance's plugin reports.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { type RunningServer, startServer } from '../src/app/server.js';
import { loadConfig } from '../src/config.js';
import { MAP_ROUTE } from '../src/http/map-passthrough.js';
import { freePort } from '../src/runtime/ports.js';
import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { polygonsLayer } from './support/cache-stack.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { until } from './support/wait.js';

const TOKEN = 'metrics-test-token';
const GETMAPS = 7;
const repo = resolve(import.meta.dirname, '..');

describe('metrics scraped by Prometheus', () => {
  let data: Fixtures;
  let workDir = '';
  let api: RunningServer;
  let qgis: QgisServerProcess;
  let prometheus: ChildProcess;
  let prometheusUrl = '';

  async function call(method: string, path: string, body?: unknown, token: string | null = TOKEN) {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    return fetch(api.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  }

  /** The value of a PromQL query that yields one sample, or undefined while it yields none. */
  async function query(promql: string): Promise<number | undefined> {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as { data: { result: { value: [number, string] }[] } };
    const [sample] = body.data.result;
    return sample === undefined ? undefined : Number(sample.value[1]);
  }

  /** Polls until the query yields `expected`; fails with `what` and the last value seen. */
  async function settle(promql: string, expected: number, what: string): Promise<void> {
    let value: number | undefined;
    await until(
      () => `${what}: ${promql} to be ${expected} (last ${value})`,
      async () => (value = await query(promql)) === expected,
      30_000,
      500,
    );
  }

  before(async () => {
    data = makeFixtures();
    workDir = mkdtempSync(join(tmpdir(), 'steward-metrics-'));
    const projectsDir = join(workDir, 'projects');
    const monitoringPort = await freePort();
    const qgisPort = await freePort();
    api = await startServer(
      loadConfig({
        STEWARD_QGISSERVER_URL: `http://127.0.0.1:${qgisPort}/ows/`,
        STEWARD_QGISSERVER_PROJECTS_DIR: projectsDir,
        STEWARD_LOGLEVEL: 'ERROR',
        STEWARD_LISTEN: '127.0.0.1:0',
        STEWARD_QGISSERVER_MONITORING_PORT: String(monitoringPort),
        STEWARD_API_TOKEN: TOKEN,
      }),
    );
    // Started after the API, so that the plugin's first connection attempt succeeds.
    qgis = await QgisServerProcess.start({
      port: qgisPort,
      env: { QGIS_PLUGINPATH: join(repo, 'plugin'), STEWARD_HOST: '127.0.0.1', STEWARD_PORT: String(monitoringPort) },
    });
    assert.equal((await call('POST', '/api/projects', { name: 'alpha', author: 'metrics' })).status, 201);
    assert.equal((await call('POST', '/api/projects/alpha/layers', polygonsLayer(data))).status, 201);

    const prometheusPort = await freePort();
    prometheusUrl = `http://127.0.0.1:${prometheusPort}`;
    const configFile = join(workDir, 'prometheus.yml');
    writeFileSync(
      configFile,
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: steward',
        '    metrics_path: /metrics',
        '    authorization:',
        `      credentials: ${TOKEN}`,
        '    static_configs:',
        `      - targets: ['${new URL(api.url).host}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(workDir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${prometheusPort}`,
      ],
      { stdio: 'ignore' },
    );
    await until(
      'Prometheus to start',
      () => {
        assert.equal(prometheus.exitCode, null, 'Prometheus exited');
        return fetch(`${prometheusUrl}/-/ready`).then(
          (response) => response.ok,
          () => false,
        );
      },
      30_000,
      200,
    );
  });

  after(async () => {
    if (prometheus.exitCode === null && prometheus.signalCode === null) {
      const exited = once(prometheus, 'exit');
      prometheus.kill('SIGTERM');
      await exited;
    }
    await api.close();
    await qgis.stop();
    rmSync(workDir, { recursive: true, force: true });
    rmSync(data.dir, { recursive: true, force: true });
  });

  it('is behind the token', async () => {
    const refused = await call('GET', '/metrics', undefined, null);
    assert.equal(refused.status, 401);
    const served = await call('GET', '/metrics');
    assert.equal(served.status, 200);
    assert.match(served.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await served.text();
    assert.match(text, /^steward_projects 1$/m);
    assert.match(text, /^steward_layers 1$/m);
    assert.match(text, /^steward_instances 1$/m);
  });

  it(`counts ${GETMAPS} GetMaps through the API and through the instance's plugin`, async () => {
    await settle('up{job="steward"}', 1, 'Prometheus to scrape the API');
    for (let made = 0; made < GETMAPS; made++) {
      const map = await call('GET', '/api/projects/alpha/layers/polygons/map');
      assert.equal(map.status, 200);
      assert.equal(map.headers.get('content-type'), 'image/png');
      await map.arrayBuffer();
    }
    const apiMaps = `sum(steward_http_requests_total{route="${MAP_ROUTE}",status="200"})`;
    await settle(apiMaps, GETMAPS, 'the maps the API answered');
    const latency = `sum(steward_http_request_duration_seconds_count{route="${MAP_ROUTE}"})`;
    assert.equal(await query(latency), GETMAPS, 'maps timed');
    const pluginMaps = 'sum(steward_instance_requests_total{request="GetMap"})';
    await settle(pluginMaps, GETMAPS, 'the GetMaps the instance served');
    assert.equal(await query('sum(steward_instance_failures_total)'), 0);
    assert.ok(((await query('sum(steward_instance_busy_seconds_total)')) ?? 0) > 0, 'render time reported');
  });
});
