/**
 * The server install of deploy/: systemd accepts its units, they run the commands `npm start` and
 * `npm run serve` run, gunicorn serves MapProxy with deploy/'s settings, and Debian's nginx, as its
 * own unit starts it, accepts the QGIS Server configuration `npm start` uses, rendered by envsubst
 * as the docs say. What the docs ask of the machine: Node 20, envsubst, a user with a home.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { qgisRequestSettings } from '../src/config.js';
import { MapProxyProcess, serverCommand } from '../src/runtime/mapproxy.js';
import { fcgiCommand, nginxFastcgiParams, nginxFcgiServers, renderTemplate } from '../src/runtime/qgis-fcgi-pool.js';
import { QGIS_SERVER_DEFAULTS, QGIS_SERVER_SETTINGS } from '../src/runtime/qgis-server.js';
import { after, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '..');
const units = join(repo, 'deploy', 'systemd');
const QGIS_CONF = 'nginx-qgis-server.conf';
const MAPPROXY_CONF = 'nginx-mapproxy.conf';
/** Where the units expect the checkout. */
const INSTALLED = '/opt/steward';
/** A MapProxy configuration whose tiles MapProxy draws itself (its debug source), uncached. */
const DEBUG_TILES = `services:
  wmts:
layers:
  - name: grid
    title: tile numbers
    sources: [grid_tiles]
caches:
  grid_tiles:
    grids: [GLOBAL_WEBMERCATOR]
    sources: [numbers]
    disable_storage: true
sources:
  numbers:
    type: debug
`;

/** The values of `key=` in a unit file (of deploy/systemd/ unless a path), in order. */
function entries(unit: string, key: string): string[] {
  const text = readFileSync(unit.startsWith('/') ? unit : join(units, unit), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1));
}

/** The `Environment=NAME=value` settings of a unit, as an object. */
function environment(unit: string): Record<string, string> {
  return Object.fromEntries(
    entries(unit, 'Environment').map((setting) => [
      setting.slice(0, setting.indexOf('=')),
      setting.slice(setting.indexOf('=') + 1),
    ]),
  );
}

/** The shell variables the header of deploy/`file` sets before envsubst, and envsubst's list. */
function headerRendering(file = QGIS_CONF): { values: Record<string, string>; list: string } {
  const header = readFileSync(join(repo, 'deploy', file), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('#'))
    .map((line) => line.replace(/^#\s?/, ''))
    .join('\n');
  const values: Record<string, string> = {};
  for (const match of header.matchAll(/^\s*((?:QGIS|TILES)_[A-Z_]+)=(?:'([^']*)'|(\S+))/gm)) {
    values[match[1] ?? ''] = match[2] ?? match[3] ?? '';
  }
  const list = /envsubst '([^']+)'/.exec(header)?.[1] ?? '';
  return { values, list };
}

/** deploy/`file` rendered by envsubst with its header's values and list, and as renderTemplate renders it, comments left out. */
async function renderings(file: string): Promise<{ envsubst: string; steward: string }> {
  const { values, list } = headerRendering(file);
  const template = readFileSync(join(repo, 'deploy', file), 'utf8');
  const child = execFile('envsubst', [list], { env: { ...process.env, ...values } });
  child.stdin?.end(template);
  let rendered = '';
  child.stdout?.on('data', (chunk: Buffer) => (rendered += chunk.toString('utf8')));
  await new Promise((resolve) => child.once('close', resolve));
  // envsubst also fills the `$NAME`s of the header's comment, which renderTemplate leaves.
  const settings = (text: string): string =>
    text
      .split('\n')
      .filter((line) => !line.startsWith('#'))
      .join('\n');
  return { envsubst: settings(rendered), steward: settings(renderTemplate(template, values)) };
}

/** ExecStart as a command: the program's name without its folder, then the arguments. */
function execStart(unit: string): string[] {
  const [line = ''] = entries(unit, 'ExecStart');
  const [program = '', ...args] = line.split(' ');
  return [basename(program), ...args];
}

describe('the server install of deploy/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steward-deploy-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('has units systemd accepts', async () => {
    const copies = ['steward.service', 'steward-mapproxy.service', 'steward-qgis-fcgi@.service'].map((unit) => {
      const copy = join(dir, unit.replace('@.', '@9001.'));
      copyFileSync(join(units, unit), copy);
      return copy;
    });
    const { stdout, stderr } = await run('systemd-analyze', ['verify', ...copies]);
    assert.equal(stdout + stderr, '');
  });

  it('runs the API as `npm run serve` does', () => {
    const serve = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
      .scripts['serve'];
    assert.equal(execStart('steward.service').join(' '), serve);
    assert.deepEqual(entries('steward.service', 'WorkingDirectory'), [INSTALLED]);
  });

  it('runs each QGIS Server process as the pool of `npm start` does, with the same settings', () => {
    const [program, args] = fcgiCommand('%i');
    assert.deepEqual(execStart('steward-qgis-fcgi@.service'), [program, ...args]);
    const environment = entries('steward-qgis-fcgi@.service', 'Environment');
    for (const [name, value] of Object.entries({ ...QGIS_SERVER_DEFAULTS, ...QGIS_SERVER_SETTINGS }))
      assert.ok(environment.includes(`${name}=${value}`), name);
  });

  it('runs MapProxy under gunicorn as `npm start` does', () => {
    const config = join(repo, 'deploy', 'gunicorn.conf.py');
    const [program, args] = serverCommand('/projects', '127.0.0.1:8081', { gunicornConfig: config });
    const installed = args.map((arg) => arg.replace(`${repo}/`, ''));
    assert.deepEqual(execStart('steward-mapproxy.service'), [program, ...installed]);
    assert.deepEqual(entries('steward-mapproxy.service', 'WorkingDirectory'), [INSTALLED]);
  });

  it('serves MapProxy under gunicorn with deploy/gunicorn.conf.py', async () => {
    const projects = join(dir, 'mapproxy');
    mkdirSync(projects);
    writeFileSync(join(projects, 'demo.yaml'), DEBUG_TILES);
    const mapproxy = await MapProxyProcess.start(projects, {
      gunicornConfig: join(repo, 'deploy', 'gunicorn.conf.py'),
    });
    try {
      const response = await fetch(`${mapproxy.url}/demo/wmts/grid/GLOBAL_WEBMERCATOR/1/0/1.png`);
      const body = Buffer.from(await response.arrayBuffer());
      assert.equal(response.status, 200, body.toString('utf8').slice(0, 500));
      const tile = decodePng(body);
      assert.deepEqual([tile.width, tile.height], [256, 256]);
    } finally {
      await mapproxy.stop();
    }
  });

  it('asks for Node 20 or later, as package.json does, not the nodejs of Debian 12', () => {
    const engines = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { engines: { node: string } })
      .engines.node;
    assert.equal(engines, '>=20');
    assert.ok(Number(process.versions.node.split('.')[0]) >= 20, process.versions.node);
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    assert.match(readme, /Node\.js 20 or later/);
    assert.doesNotMatch(readme, /Debian's packages: `nodejs`/);
  });

  it('installs envsubst (gettext-base) where the docs render the nginx configuration with it', async () => {
    assert.match(readFileSync(join(repo, 'scripts', 'setup.sh'), 'utf8'), /^\s+.*\bgettext-base\b/m);
    assert.match(readFileSync(join(repo, 'README.md'), 'utf8'), /`gettext-base` \(`envsubst`/);
    // The header's own command renders what `npm start` renders from the same values.
    const { values } = headerRendering();
    assert.deepEqual(Object.keys(values).sort(), [
      'QGIS_ACCESS_API',
      'QGIS_ACCESS_CHECK',
      'QGIS_FCGI_PARAMS',
      'QGIS_FCGI_SERVERS',
      'QGIS_LISTEN',
    ]);
    const { envsubst, steward } = await renderings(QGIS_CONF);
    assert.equal(envsubst, steward);
    assert.match(envsubst, /fastcgi_param PGSYSCONFDIR "\/etc\/steward";/);
    assert.equal(values['QGIS_FCGI_SERVERS'], nginxFcgiServers([9001, 9002]));
    assert.deepEqual(Object.keys(headerRendering(MAPPROXY_CONF).values).sort(), [
      'TILES_ACCESS_API',
      'TILES_LISTEN',
      'TILES_MAPPROXY',
    ]);
    const mapproxy = await renderings(MAPPROXY_CONF);
    assert.equal(mapproxy.envsubst, mapproxy.steward);
  });

  it('gives QGIS Server the PostgreSQL settings of the units on every path: its own, nginx, Steward', () => {
    const steward = environment('steward.service');
    const qgis = environment('steward-qgis-fcgi@.service');
    assert.equal(steward['PGSYSCONFDIR'], '/etc/steward');
    assert.equal(qgis['PGSYSCONFDIR'], steward['PGSYSCONFDIR']);
    // What Steward sends with its FastCGI requests, nginx sends with its own.
    assert.deepEqual(qgisRequestSettings(steward), [
      ['OGR_SQLITE_JOURNAL', 'DELETE'],
      ['OGR_SQLITE_PRAGMA', 'busy_timeout=5000'],
      ['PGSYSCONFDIR', '/etc/steward'],
    ]);
    assert.equal(headerRendering().values['QGIS_FCGI_PARAMS'], nginxFastcgiParams(qgisRequestSettings(steward)));
  });

  it("runs QGIS Server with a private runtime folder, as a user with a home for QGIS's authentication database", () => {
    assert.deepEqual(entries('steward-qgis-fcgi@.service', 'RuntimeDirectoryMode'), ['0700']);
    const runtime = entries('steward-qgis-fcgi@.service', 'RuntimeDirectory')[0];
    assert.equal(environment('steward-qgis-fcgi@.service')['XDG_RUNTIME_DIR'], `/run/${runtime}`);
    for (const unit of ['steward.service', 'steward-mapproxy.service', 'steward-qgis-fcgi@.service'])
      assert.deepEqual(entries(unit, 'User'), ['steward'], unit);
    assert.match(
      readFileSync(join(repo, 'README.md'), 'utf8'),
      /`useradd --system --create-home --home-dir \/var\/lib\/steward --shell \/usr\/sbin\/nologin steward`/,
    );
  });

  it("gives Debian's nginx, started as nginx.service starts it, the QGIS Server and MapProxy configurations, which it accepts", async () => {
    const snippets = [QGIS_CONF, MAPPROXY_CONF].map((file) => {
      const snippet = join(dir, file);
      writeFileSync(
        snippet,
        renderTemplate(readFileSync(join(repo, 'deploy', file), 'utf8'), headerRendering(file).values),
      );
      return `include ${snippet};`;
    });
    const debian = readFileSync('/etc/nginx/nginx.conf', 'utf8');
    assert.match(debian, /include \/etc\/nginx\/conf\.d\/\*\.conf;/);
    const main = join(dir, 'nginx.conf');
    writeFileSync(main, debian.replace('include /etc/nginx/conf.d/*.conf;', snippets.join(' ')));
    // nginx.service's own check before it starts nginx (ExecStartPre), on this configuration.
    const [check = ''] = entries('/lib/systemd/system/nginx.service', 'ExecStartPre');
    assert.equal(check, "/usr/sbin/nginx -t -q -g 'daemon on; master_process on;'");
    await run('/usr/sbin/nginx', ['-t', '-q', '-g', 'daemon on; master_process on;', '-c', main]);
  });
});
