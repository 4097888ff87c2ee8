import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { afterEach, beforeEach, describe, it } from '../../test/support/node-test.js';
import { until } from '../../test/support/wait.js';
import { freePort } from '../runtime/ports.js';
import { Preconnector } from './preconnector.js';
import { qgisGet } from './qgis-get.js';

/** A server that closes every connection after one answer, as qgis_mapserver does (HTTP/1.0). */
class OneShotServer {
  /** Each accepted connection in order, with the request paths it carried and whether it is closed. */
  readonly connections: Array<{ socket: Socket; paths: string[]; closed: boolean }> = [];
  private readonly server: Server;

  constructor() {
    this.server = createServer((request, response) => {
      this.connections.find((connection) => connection.socket === request.socket)?.paths.push(request.url ?? '');
      response.writeHead(200, { connection: 'close', 'content-type': 'text/plain' }).end('drawn');
    });
    this.server.on('connection', (socket: Socket) => {
      const connection = { socket, paths: [] as string[], closed: false };
      this.connections.push(connection);
      socket.on('close', () => (connection.closed = true));
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function fetchText(url: string, connections: Preconnector): Promise<string> {
  const { body } = await qgisGet(url, connections);
  let text = '';
  for await (const chunk of body) text += String(chunk);
  return text;
}

describe('Preconnector, as the API asks QGIS Server', () => {
  let server: OneShotServer;
  let url: string;
  let agent: Preconnector;

  beforeEach(async () => {
    server = new OneShotServer();
    url = await server.listen();
    agent = new Preconnector(300);
  });
  afterEach(async () => {
    agent.destroy();
    await server.close();
  });

  it('sends each request after the first on a connection opened before it was asked for', async () => {
    assert.equal(await fetchText(`${url}/one`, agent), 'drawn');
    await until('two connections', () => server.connections.length === 2, 10_000, 10);
    assert.deepEqual(server.connections[1]?.paths, [], 'the spare waits, unused');
    assert.equal(await fetchText(`${url}/two`, agent), 'drawn');
    assert.equal(await fetchText(`${url}/three`, agent), 'drawn');
    assert.deepEqual(
      server.connections.map((connection) => connection.paths),
      [['/one'], ['/two'], ['/three'], []],
      'one request per connection, each on the spare opened by the request before it',
    );
  });

  it('closes a spare nobody takes, so an idle client holds no connection', async () => {
    await fetchText(`${url}/one`, agent);
    await until('two connections', () => server.connections.length === 2, 10_000, 10);
    await until(
      'every connection to close',
      () => server.connections.every((connection) => connection.closed),
      10_000,
      10,
    );
    assert.equal(await fetchText(`${url}/two`, agent), 'drawn', 'a request after the spare expired connects anew');
    // Its connection and the next spare are opened together, and a loaded machine may accept either first.
    assert.deepEqual(
      server.connections.slice(2).flatMap((connection) => connection.paths),
      ['/two'],
    );
  });

  it('uses a spare only for the server it was opened to', async () => {
    const other = new OneShotServer();
    const otherUrl = await other.listen();
    try {
      await fetchText(`${url}/one`, agent);
      await until('two connections', () => server.connections.length === 2, 10_000, 10);
      assert.equal(await fetchText(`${otherUrl}/elsewhere`, agent), 'drawn');
      await until('the second connection to close', () => server.connections[1]?.closed === true, 10_000, 10);
      assert.deepEqual(server.connections[1]?.paths, [], "the first server's spare is closed, not used");
      assert.deepEqual(other.connections[0]?.paths, ['/elsewhere']);
    } finally {
      await other.close();
    }
  });

  it('connects anew when the spare was closed by the server, and closes its spare on destroy', async () => {
    await fetchText(`${url}/one`, agent);
    await until('two connections', () => server.connections.length === 2, 10_000, 10);
    server.connections[1]?.socket.destroy();
    await sleep(50);
    assert.equal(await fetchText(`${url}/two`, agent), 'drawn');
    assert.deepEqual(server.connections[2]?.paths, ['/two']);
    await until('four connections', () => server.connections.length === 4, 10_000, 10);
    agent.destroy();
    await until('the fourth connection to close', () => server.connections[3]?.closed === true, 10_000, 10);
  });

  it('fails a request to a server that is down, and its failed spare goes unnoticed', async () => {
    const nobody = `http://127.0.0.1:${await freePort('127.0.0.1')}`;
    await assert.rejects(fetchText(`${nobody}/one`, agent), /cannot be reached: connect ECONNREFUSED/);
    await assert.rejects(fetchText(`${nobody}/two`, agent), /cannot be reached: connect ECONNREFUSED/);
    await sleep(50);
  });
});
