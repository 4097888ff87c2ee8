import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { FastifyInstance } from 'fastify';

import { type Answerer, FakePlugin, hello, instancesApp } from '../../test/support/monitoring.js';
import { after, before, describe, test } from '../../test/support/node-test.js';
import { waitFor } from '../../test/support/wait.js';
import { InstanceRegistry } from '../monitor/registry.js';
import { commands } from './commands.js';
import { run } from './run.js';

const stats = { count: 42, service: 'WMS', request: 'GetMap', project: '/data/roads.qgs', duration: 17 };
const metadata = {
  cache: { projects: [] },
  plugins: ['steward_monitor'],
  providers: ['ogr'],
  versions: { gdal: '3.6.2', python: '3.11.2', qt: '5.15.8', qgis: '3.22.16' },
};
const results: Record<string, unknown> = { stats, metadata, logs: { lines: ['first', 'second'] } };
const answering: Answerer = ({ id, method }) => ({ id, result: results[method] });

interface Outcome {
  code: number;
  out: string;
  err: string;
}

async function steward(
  argv: string[],
  env: NodeJS.ProcessEnv,
  signal = new AbortController().signal,
): Promise<Outcome> {
  const outcome = { code: -1, out: '', err: '' };
  const io = {
    out: (text: string) => void (outcome.out += text),
    err: (text: string) => void (outcome.err += text),
    env,
    isTTY: false,
    signal,
    readSecret: async () => '',
  };
  outcome.code = await run(argv, io);
  return outcome;
}

describe('steward against an API with two instances', () => {
  const registry = new InstanceRegistry({ replyTimeoutMs: 200 });
  const plugins: FakePlugin[] = [];
  let app: FastifyInstance;
  let env: NodeJS.ProcessEnv;
  let answeringId = '';
  let silentId = '';

  before(async () => {
    await registry.start(0, '127.0.0.1');
    plugins.push(await FakePlugin.connect(registry.port, hello(), answering));
    answeringId = await waitFor('first registration', () => registry.list()[0]?.id);
    plugins.push(await FakePlugin.connect(registry.port, hello()));
    silentId = await waitFor('second registration', () => registry.list().find((i) => i.id !== answeringId)?.id);
    app = await instancesApp(registry, '3.22.16');
    env = { STEWARD_SERVER_URL: await app.listen({ port: 0, host: '127.0.0.1' }) };
  });
  after(async () => {
    for (const plugin of plugins) plugin.close();
    await app.close();
    await registry.close();
  });

  test('ps prints a table of the instances, or JSON', async () => {
    const table = await steward(['ps'], env);
    assert.equal(table.code, 0, table.err);
    const lines = table.out.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^INSTANCE ID\s+IP\s+STATUS$/);
    assert.equal(lines.length, 3);
    assert.match(table.out, new RegExp(`${answeringId}\\s+127\\.0\\.0\\.1\\s+Binded \\d+ seconds ago`));
    const json = await steward(['ps', '--json'], env);
    assert.deepEqual(
      (JSON.parse(json.out) as { id: string }[]).map(({ id }) => id).sort(),
      [answeringId, silentId].sort(),
    );
  });

  test('inspect prints the metadata as indented JSON', async () => {
    const { code, out } = await steward(['inspect', answeringId], env);
    assert.equal(code, 0);
    const administered = {
      version: '3.22.16',
      source: 'setting',
      symbology_catalogue: '3.22',
      catalogue_match: 'exact',
    };
    assert.deepEqual(JSON.parse(out), { ...metadata, administered_qgis_server: administered });
    assert.match(out, /^\{\n {2}"cache"/);
  });

  test('logs prints the log lines, or JSON', async () => {
    assert.equal((await steward(['logs', answeringId], env)).out, 'first\nsecond\n');
    assert.deepEqual(JSON.parse((await steward(['logs', answeringId, '--json'], env)).out), results['logs']);
  });

  test('stats prints a row per instance, with the error of one that does not answer', async () => {
    const { code, out } = await steward(['stats'], env);
    assert.equal(code, 0);
    assert.match(out, /^INSTANCE ID\s+COUNT\s+TIME\s+SERVICE\s+REQUEST\s+PROJECT\n/);
    assert.match(out, new RegExp(`${answeringId}\\s+42\\s+17 ms\\s+WMS\\s+GetMap\\s+/data/roads\\.qgs`));
    assert.match(out, new RegExp(`${silentId}\\s+-\\s+-\\s+-\\s+-\\s+.*did not answer`));
    const json = JSON.parse((await steward(['stats', '--json'], env)).out) as object[];
    assert.deepEqual(
      json.find((row) => 'count' in row),
      { id: answeringId, ...stats },
    );
  });

  test('stats --watch refreshes until interrupted', async () => {
    const stop = new AbortController();
    const started = Date.now();
    let renders = 0;
    const io = {
      out: () => void (++renders === 2 && stop.abort()),
      err: () => {},
      env,
      isTTY: false,
      signal: stop.signal,
      readSecret: async () => '',
    };
    assert.equal(await run(['stats', '--watch'], io), 0);
    assert.equal(renders, 2);
    assert.ok(Date.now() - started >= 1900, 'the second render waits for the interval');
  });

  test('an unknown id is one line on stderr and exit code 1', async () => {
    const { code, out, err } = await steward(['inspect', 'nosuchid'], env);
    assert.deepEqual([code, out], [1, '']);
    assert.equal(err, 'steward: No QGIS Server instance with id nosuchid is registered. [instance_not_found]\n');
  });
});

test('an unreachable server is one line on stderr and exit code 1', async () => {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  const { code, err } = await steward(['ps'], { STEWARD_SERVER_URL: `http://127.0.0.1:${port}` });
  assert.equal(code, 1);
  assert.match(err, /^steward: Cannot reach the Steward server at http:\/\/127\.0\.0\.1:\d+\/: ECONNREFUSED\n$/);
});

test('a missing STEWARD_SERVER_URL is reported', async () => {
  const { code, err } = await steward(['ps'], {});
  assert.equal(code, 1);
  assert.match(err, /STEWARD_SERVER_URL is not set/);
});

test('sends STEWARD_API_TOKEN as a bearer token', async () => {
  const seen: (string | undefined)[] = [];
  const server = createServer((request, response) => {
    seen.push(request.headers.authorization);
    response.setHeader('content-type', 'application/json').end('{"servers":[]}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  try {
    const { out } = await steward(['ps', '--json'], {
      STEWARD_SERVER_URL: `http://127.0.0.1:${port}`,
      STEWARD_API_TOKEN: 'tok',
    });
    assert.equal(out, '[]\n');
    assert.deepEqual(seen, ['Bearer tok']);
  } finally {
    server.close();
  }
});

test('--schema names the schema of the project commands, and is left to the API when not given', async () => {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method ?? ''} ${request.url ?? ''}`);
    const body = request.url?.startsWith('/api/checks')
      ? {}
      : { status: 'ok', layers: [], findings: [], instances: [] };
    response.setHeader('content-type', 'application/json').end(JSON.stringify(body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const env = { STEWARD_SERVER_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  try {
    for (const argv of [
      ['check', 'roads', '--schema', 'fleet a'],
      ['check', '--schema', 'fleet'],
      ['reload', 'roads', '--schema', 'fleet'],
      ['pin', 'roads', '--schema', 'fleet'],
      ['unpin', 'roads', '--schema', 'fleet'],
      ['check', 'roads'],
    ]) {
      const { code, err } = await steward([...argv, '--json'], env);
      assert.equal(code, 0, `${argv.join(' ')}: ${err}`);
    }
    assert.deepEqual(seen, [
      'GET /api/projects/roads/check?schema=fleet+a',
      'GET /api/checks?schema=fleet',
      'POST /api/projects/roads/reload?schema=fleet',
      'PUT /api/projects/roads/pin?schema=fleet',
      'DELETE /api/projects/roads/pin?schema=fleet',
      'GET /api/projects/roads/check',
    ]);
  } finally {
    server.close();
  }
});

test('--help describes the command and each subcommand', async () => {
  const main = await steward(['--help'], {});
  assert.equal(main.code, 0);
  for (const name of Object.keys(commands)) {
    assert.match(main.out, new RegExp(`^  ${name}\\b`, 'm'));
    const sub = await steward([name, '--help'], {});
    assert.equal(sub.code, 0);
    assert.match(sub.out, new RegExp(`^Usage: steward ${name}\\b`));
    assert.deepEqual(await steward([name, '-h'], {}), sub, `${name} -h`);
  }
  assert.match((await steward(['stats', '--help'], {})).out, /--watch/);
});

test('usage mistakes exit with 2 and point to --help', async () => {
  for (const argv of [[], ['frobnicate'], ['ps', '--bogus'], ['inspect'], ['ps', 'extra']]) {
    const { code, err } = await steward(argv, {});
    assert.equal(code, 2, argv.join(' '));
    assert.match(err, /--help' for usage/);
  }
});

test('options are parsed strictly: unknown, missing or unwanted values are usage errors', async () => {
  const mistakes: [string[], RegExp][] = [
    [['ps', '--bogus'], /^steward ps: Unknown option '--bogus'\n/],
    [['ps', '--json=yes'], /^steward ps: Option '--json' does not take an argument\n/],
    [['ps', '-x'], /^steward ps: Unknown option '-x'\n/],
    [['seed', 'demo', '--levels', '0-3', '--schema'], /^steward seed: Option '--schema <value>' argument missing\n/],
    [['check', '--schema'], /^steward check: Option '--schema <value>' argument missing\n/],
  ];
  for (const [argv, message] of mistakes) {
    const { code, out, err } = await steward(argv, {});
    assert.equal(code, 2, argv.join(' '));
    assert.equal(out, '');
    assert.match(err, message);
    assert.match(err, new RegExp(`Run 'steward ${argv[0]} --help' for usage\\.\\n$`));
  }
});

test("a command's usage lists its options with -h, --help", async () => {
  const { code, out } = await steward(['seed', '-h'], {});
  assert.equal(code, 0);
  assert.match(out, /^Usage: steward seed <project> .*\[--levels <value>\].*\[-h, --help\]$/m);
  assert.match(out, /^ {2}-h, --help\s+show this help$/m);
});
