import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server, Socket } from 'node:net';

import { after, before, describe, it } from '../../test/support/node-test.js';
import { BadRequest, RequestTimeout } from '../errors.js';
import { socketBodiesReadable, type SocketBody, socketBodyChunks } from './socket-body.js';

/** scripts/run-tests.mjs runs the storage tests a second time with the addon left out. */
const withAddon = process.env['STEWARD_TEST_ADDON'] !== 'absent';

/** The descriptor of a connection Node reads, as the HTTP server hands its socket over. */
function descriptor(socket: Socket): number {
  return (socket as unknown as { _handle: { fd: number } })._handle.fd;
}

describe(`bodies read from their sockets (${withAddon ? 'with' : 'without'} the addon)`, () => {
  let server: Server;
  const accepted: Socket[] = [];
  let arrived: (() => void) | undefined;

  before(async () => {
    server = createServer({ pauseOnConnect: true }, (socket) => {
      accepted.push(socket);
      arrived?.();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  after(() => server.close());

  /** A client connected to the server, and the server's end of it, unread. */
  async function connection(): Promise<{ client: Socket; served: Socket }> {
    const taken = new Promise<void>((resolve) => (arrived = resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the server has no port');
    const client = new Socket().connect(address.port, '127.0.0.1');
    await taken;
    return { client, served: accepted.at(-1) as Socket };
  }

  function body(served: Socket, length: number, head = new Uint8Array(0)): SocketBody {
    return { fd: descriptor(served), head, length, idleMs: 300, totalMs: 60_000, startedAt: Date.now() };
  }

  async function read(source: AsyncIterable<Buffer>): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of source) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks);
  }

  it('is available when setup built the addon', () => {
    assert.equal(socketBodiesReadable(), withAddon, 'native/build/fd-duplicate.node: run scripts/build-native.sh');
  });

  if (!withAddon) {
    it('refuses to read without the addon (the HTTP server reads bodies itself then)', async () => {
      const { client, served } = await connection();
      await assert.rejects(read(socketBodyChunks(body(served, 1))), /fd-duplicate is not built/);
      client.destroy();
      served.destroy();
    });
    return;
  }

  it('reads its length and no further, and leaves the connection open for the answer', async (t) => {
    const { client, served } = await connection();
    const sent = randomBytes(5 * 1024 * 1024 + 123);
    const next = Buffer.from('GET /next HTTP/1.1\r\n');
    // The first 1000 bytes came with the headers: the socket holds the rest.
    client.write(Buffer.concat([sent.subarray(1000), next]));
    const got = await read(socketBodyChunks(body(served, sent.length - 1000, sent.subarray(0, 1000))));
    assert.ok(got.equals(sent), 'the head, then the rest from the socket, in order');
    // What follows the body is left for the connection's owner, which still answers on it.
    served.resume();
    const [following] = (await once(served, 'data')) as [Buffer];
    assert.ok(following.equals(next));
    served.end('answer');
    const [answer] = (await once(client, 'data')) as [Buffer];
    assert.equal(answer.toString(), 'answer');
    client.destroy();
    t.diagnostic('read 5 MiB from a descriptor of its own');
  });

  it('refuses a body cut short as 400, one that stops arriving as 408, and stops when aborted', async () => {
    const cut = await connection();
    cut.client.end(Buffer.alloc(1000));
    await assert.rejects(read(socketBodyChunks(body(cut.served, 2000))), (error: unknown) => {
      assert.ok(error instanceof BadRequest, String(error));
      assert.match(error.message, /cut short/);
      return true;
    });
    cut.served.destroy();

    const stalled = await connection();
    stalled.client.write(Buffer.alloc(1000));
    const started = performance.now();
    await assert.rejects(read(socketBodyChunks(body(stalled.served, 2000))), (error: unknown) => {
      assert.ok(error instanceof RequestTimeout, String(error));
      assert.match(error.message, /stopped arriving for 0.3 s/);
      return true;
    });
    assert.ok(performance.now() - started >= 290);
    const late = { ...body(stalled.served, 2000), totalMs: 100, startedAt: Date.now() - 50 };
    await assert.rejects(read(socketBodyChunks(late)), /not received whole within 0.1 s/);

    const controller = new AbortController();
    setTimeout(() => controller.abort(new BadRequest('the connection closed')), 50);
    await assert.rejects(read(socketBodyChunks(body(stalled.served, 2000), controller.signal)), /connection closed/);
    stalled.client.destroy();
    stalled.served.destroy();
  });
});
