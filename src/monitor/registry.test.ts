import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { type Answerer, FakePlugin, hello, silentPlugin } from '../../test/support/monitoring.js';
import { after, before, describe, test } from '../../test/support/node-test.js';
import { waitFor } from '../../test/support/wait.js';
import { BadGateway, GatewayTimeout, NotFound } from '../errors.js';
import { InstanceRegistry, MAX_AWAITING_HELLO, MAX_HELLO_BYTES } from './registry.js';

const stats = { count: 3, service: 'WMS', request: 'GetMap', project: '/p.qgs', duration: 12 };
const answering: Answerer = ({ id, method }) => {
  if (method === 'stats') return { id, result: stats };
  if (method === 'logs') return { id, result: { lines: ['a', 'b'] } };
  return { id, error: 'no metadata here' };
};

async function register(registry: InstanceRegistry, plugin: Promise<FakePlugin>): Promise<[FakePlugin, string]> {
  const before = new Set(registry.list().map((instance) => instance.id));
  const connected = await plugin;
  const id = await waitFor('registration', () => registry.list().find((instance) => !before.has(instance.id))?.id);
  return [connected, id];
}

describe('InstanceRegistry', () => {
  const registry = new InstanceRegistry({ replyTimeoutMs: 300, helloTimeoutMs: 500 });
  const plugins: FakePlugin[] = [];
  const track = (plugin: Promise<FakePlugin>) => plugin.then((p) => (plugins.push(p), p));
  let port = 0;
  let id = '';
  let registering = 0;

  before(async () => {
    await registry.start(0, '127.0.0.1');
    port = registry.port;
    registering = Date.now();
    [, id] = await register(registry, track(FakePlugin.connect(port, hello(), answering)));
  });
  after(async () => {
    for (const plugin of plugins) plugin.close();
    await registry.close();
  });

  test('lists a registered instance with a short id, its ip and its age', () => {
    const [listed, ...others] = registry.list();
    assert.deepEqual(others, []);
    assert.deepEqual(
      { ...listed, binded: 0, registered_at: '' },
      { id, ip: '127.0.0.1', binded: 0, registered_at: '' },
    );
    const age = listed?.binded ?? -1;
    assert.ok(age >= 0 && age <= (Date.now() - registering) / 1000, `binded ${age} is the seconds since registering`);
    const registered = Date.parse(listed?.registered_at ?? '');
    assert.ok(registered >= registering - 1 && registered <= Date.now(), `registered at ${listed?.registered_at}`);
    assert.match(id, /^[0-9a-f]{8}$/);
  });

  test('matches replies to requests and checks their shape', async () => {
    assert.deepEqual(await registry.stats(id), stats);
    assert.deepEqual(await registry.logs(id), { lines: ['a', 'b'] });
    await assert.rejects(
      registry.metadata(id),
      (error) => error instanceof BadGateway && /no metadata here/.test(error.message),
    );
    const ids = plugins[0]?.requests.map((request) => request.id);
    assert.deepEqual(ids, [1, 2, 3]);
  });

  test('rejects a result of the wrong shape', async () => {
    const [, otherId] = await register(
      registry,
      track(FakePlugin.connect(port, hello(), ({ id: n }) => ({ id: n, result: { count: 'x' } }))),
    );
    await assert.rejects(registry.stats(otherId), BadGateway);
  });

  test('answers GatewayTimeout when the plugin stays silent', async () => {
    const [, silentId] = await register(registry, track(FakePlugin.connect(port, hello(), silentPlugin)));
    const started = Date.now();
    await assert.rejects(registry.stats(silentId), GatewayTimeout);
    assert.ok(Date.now() - started >= 250);
  });

  test('answers NotFound for an unknown id', () => {
    assert.throws(() => registry.stats('00000000'), NotFound);
  });

  test('forgets an instance when its socket closes, failing what it still owed', async () => {
    const [plugin, goneId] = await register(registry, track(FakePlugin.connect(port, hello(), silentPlugin)));
    const owed = registry.metadata(goneId);
    plugin.close();
    await assert.rejects(owed, BadGateway);
    await waitFor('removal', () => !registry.list().some((instance) => instance.id === goneId));
  });

  test('closes connections that send garbage, an oversized line or nothing, and keeps serving', async () => {
    const garbage = await track(FakePlugin.connect(port, undefined));
    garbage.socket.write('this is not json\n');
    const oversized = await track(FakePlugin.connect(port, undefined));
    const chunk = Buffer.alloc(256 * 1024, 'x');
    for (let i = 0; i < 8; i++) oversized.socket.write(chunk);
    const mute = await track(FakePlugin.connect(port, undefined));
    await Promise.all([garbage.closed, oversized.closed, mute.closed]);
    assert.deepEqual(await registry.stats(id), stats);
  });

  test('drops a malformed or oversized message from a registered plugin without disconnecting it', async () => {
    const [plugin, chattyId] = await register(registry, track(FakePlugin.connect(port, hello(), answering)));
    plugin.socket.write('garbage\n');
    plugin.socket.write(Buffer.alloc(1024 * 1024 + 10, 'y'));
    plugin.socket.write('\n');
    assert.deepEqual(await registry.stats(chattyId), stats);
  });
});

describe('InstanceRegistry with a token', () => {
  const registry = new InstanceRegistry({ token: 's3cret' });
  const plugins: FakePlugin[] = [];
  before(() => registry.start(0, '127.0.0.1'));
  after(async () => {
    for (const plugin of plugins) plugin.close();
    await registry.close();
  });

  test('refuses a hello with a wrong or missing token and accepts the right one', async () => {
    const wrong = await FakePlugin.connect(registry.port, hello('guess'));
    const missing = await FakePlugin.connect(registry.port, { type: 'hello', version: 1 });
    plugins.push(wrong, missing);
    await Promise.all([wrong.closed, missing.closed]);
    assert.deepEqual(registry.list(), []);
    plugins.push(await FakePlugin.connect(registry.port, hello('s3cret')));
    await waitFor('registration', () => registry.list().length === 1);
  });
});

test('close() forgets every instance and the registry can listen again', async () => {
  const registry = new InstanceRegistry();
  await registry.start(0, '127.0.0.1');
  const port = registry.port;
  const plugin = await FakePlugin.connect(port, hello());
  await waitFor('registration', () => registry.list().length === 1);
  await registry.close();
  assert.deepEqual(registry.list(), []);
  await plugin.closed;
  await registry.start(port, '127.0.0.1');
  const again = await FakePlugin.connect(port, hello());
  await waitFor('registration', () => registry.list().length === 1);
  again.close();
  await registry.close();
});

test('invalidateProject asks every instance in parallel, waits for each and never throws', async () => {
  const warnings: string[] = [];
  const registry = new InstanceRegistry({
    replyTimeoutMs: 300,
    log: { info: () => {}, warn: (message) => warnings.push(message) },
  });
  await registry.start(0, '127.0.0.1');
  await registry.invalidateProject('postgresql:?project=none');
  const map = 'postgresql:?service=s&schema=a&project=p';
  const plugins = await Promise.all([
    FakePlugin.connect(registry.port, hello(), ({ id }) => ({ id, result: true })),
    FakePlugin.connect(registry.port, hello(), ({ id }) => ({ id, result: true })),
    FakePlugin.connect(registry.port, hello(), ({ id }) => ({ id, error: 'refused' })),
    FakePlugin.connect(registry.port, hello(), silentPlugin),
  ]);
  await waitFor('registration', () => registry.list().length === 4);
  const started = Date.now();
  await registry.invalidateProject(map);
  const elapsed = Date.now() - started;
  assert.ok(elapsed >= 250 && elapsed < 600, `waited for the silent one, in parallel: ${elapsed} ms`);
  for (const plugin of plugins) assert.deepEqual(plugin.requests, [{ id: 1, method: 'invalidate', params: { map } }]);
  assert.equal(warnings.length, 2, warnings.join('\n'));
  assert.ok(
    warnings.some((warning) => /refused/.test(warning)) && warnings.some((warning) => /did not answer/.test(warning)),
  );
  for (const plugin of plugins) plugin.close();
  await registry.close();
});

/**
 * Bytes of buffers held (what socket data and unfinished lines take), after full collections; V8
 * frees the memory of collected buffers after the collection, so it collects again a moment later.
 */
async function heldBuffers(): Promise<number> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  for (let round = 0; round < 3; round++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage().arrayBuffers;
}

describe('InstanceRegistry under a flood of connections that never say hello', () => {
  const registry = new InstanceRegistry({ helloTimeoutMs: 60_000 });
  const flood: Socket[] = [];
  let closed = 0;

  before(() => registry.start(0, '127.0.0.1'));
  after(async () => {
    for (const socket of flood) socket.destroy();
    await registry.close();
  });

  test('holds a bounded number of them and of their bytes, lets a plugin in, and gives the memory back', async () => {
    const baseline = await heldBuffers();
    const firstLine = Buffer.alloc(MAX_HELLO_BYTES - 1024, 'x');
    for (let i = 0; i < 1000; i++) {
      const socket = connect(registry.port, '127.0.0.1');
      socket.on('error', () => {});
      socket.once('close', () => closed++);
      await once(socket, 'connect');
      socket.write(firstLine);
      flood.push(socket);
    }
    await waitFor('the oldest to be closed', () => closed >= 1000 - MAX_AWAITING_HELLO || undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(1000 - closed, MAX_AWAITING_HELLO, 'connections held without a hello');
    const during = (await heldBuffers()) - baseline;
    assert.ok(during < 12 * 1024 * 1024, `${(during / 1024 / 1024).toFixed(1)} MiB held during the flood`);

    const plugin = await FakePlugin.connect(registry.port, hello(), answering);
    const id = await waitFor('registration', () => registry.list()[0]?.id);
    assert.deepEqual(await registry.stats(id), stats);
    plugin.close();

    for (const socket of flood) socket.destroy();
    await waitFor('the flood to be gone', () => closed === 1000 || undefined);
    const afterwards = (await heldBuffers()) - baseline;
    assert.ok(afterwards < 2 * 1024 * 1024, `${(afterwards / 1024 / 1024).toFixed(1)} MiB still held after the flood`);
  });

  test('refuses a first line longer than a hello can be', async () => {
    const plugin = await FakePlugin.connect(registry.port, undefined);
    plugin.socket.write(Buffer.alloc(MAX_HELLO_BYTES + 1, 'x'));
    await plugin.closed;
  });
});
