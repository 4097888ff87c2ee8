/**
 * The server install of deploy/: systemd accepts its units, they run the commands `npm start` and
 * `npm run serve` run, gunicorn serves MapProxy with deploy/'s settings, and Debian's nginx, as its
 * own unit starts it, accepts the QGIS Server configuration `npm start` uses.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { MapProxyProcess, serverCommand } from '../src/runtime/mapproxy.js';
import { fcgiCommand, renderTemplate } from '../src/runtime/qgis-fcgi-pool.js';
import { QGIS_SERVER_DEFAULTS, QGIS_SERVER_SETTINGS } from '../src/runtime/qgis-server.js';
import { after, describe, it } from './support/node-test.js';
import { decodePng } from './support/png.js';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '..');
const units = join(repo, 'deploy', 'systemd');
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

  it("gives Debian's nginx, started as nginx.service starts it, a QGIS Server configuration it accepts", async () => {
    const snippet = join(dir, 'qgis-server.conf');
    writeFileSync(
      snippet,
      renderTemplate(readFileSync(join(repo, 'deploy', 'nginx-qgis-server.conf'), 'utf8'), {
        QGIS_LISTEN: '127.0.0.1:8080',
        QGIS_FCGI_SERVERS: 'server 127.0.0.1:9001; server 127.0.0.1:9002;',
      }),
    );
    const debian = readFileSync('/etc/nginx/nginx.conf', 'utf8');
    assert.match(debian, /include \/etc\/nginx\/conf\.d\/\*\.conf;/);
    const main = join(dir, 'nginx.conf');
    writeFileSync(main, debian.replace('include /etc/nginx/conf.d/*.conf;', `include ${snippet};`));
    // nginx.service's own check before it starts nginx (ExecStartPre), on this configuration.
    const [check = ''] = entries('/lib/systemd/system/nginx.service', 'ExecStartPre');
    assert.equal(check, "/usr/sbin/nginx -t -q -g 'daemon on; master_process on;'");
    await run('/usr/sbin/nginx', ['-t', '-q', '-g', 'daemon on; master_process on;', '-c', main]);
  });
});
