import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';

import { after, before, describe, it } from '../../test/support/node-test.js';
import { BadGateway } from '../errors.js';
import { freePort } from '../runtime/ports.js';
import { bytes } from '../services/maps.js';
import { Preconnector } from './preconnector.js';
import { qgisGet, qgisRequest } from './qgis-get.js';

/** A TCP server that answers each request path with the pieces `answers` gives, written apart. */
function rawServer(answers: Record<string, Array<string | Buffer>>): Server {
  return createServer((socket: Socket) => {
    let request = '';
    const answer = async (path: string): Promise<void> => {
      for (const piece of answers[path] ?? []) {
        socket.write(piece);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      socket.end();
    };
    socket.on('data', (chunk: Buffer) => {
      request += chunk.toString('latin1');
      if (request.includes('\r\n\r\n')) void answer(/^GET (\S+) HTTP\/1\.0\r\n/.exec(request)?.[1] ?? '');
    });
  });
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 0xff]);

describe('qgisGet', () => {
  const connections = new Preconnector(300);
  const server = rawServer({
    '/ows/?MAP=a&REQUEST=GetMap': [
      'HTTP/1.0 200 OK\r\nServer: QGIS\r\nContent-Len',
      `gth: ${PNG.length}\r\nContent-Type: image/png\r\n\r\n`,
      PNG.subarray(0, 5),
      PNG.subarray(5),
    ],
    '/whole': [Buffer.concat([Buffer.from(`HTTP/1.0 200 OK\r\nContent-Length: ${PNG.length}\r\n\r\n`), PNG])],
    '/short': [`HTTP/1.0 200 OK\r\nContent-Length: ${PNG.length + 1}\r\n\r\n`, PNG],
    '/error': ['HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/xml\r\n\r\n<ServerException/>'],
    '/silent': [],
    '/garbage': ['SSH-2.0-OpenSSH\r\n\r\n'],
  });
  let origin = '';
  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    connections.destroy();
    server.close();
  });

  it('passes the status, the headers and the body on as they came, whatever their pieces', async () => {
    const answer = await qgisGet(`${origin}/ows/?MAP=a&REQUEST=GetMap`, connections);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'image/png');
    assert.equal(answer.headers.get('content-length'), String(PNG.length));
    assert.deepEqual(await bytes(answer.body), PNG);
  });

  it('gives a body that came with the head whole, without its connection', async () => {
    const answer = await qgisGet(`${origin}/whole`, connections);
    assert.ok(Buffer.isBuffer(answer.body));
    assert.deepEqual(answer.body, PNG);
  });

  it("passes a failure's status and text on", async () => {
    const answer = await qgisGet(`${origin}/error`, connections);
    assert.equal(answer.status, 500);
    assert.equal((await bytes(answer.body)).toString(), '<ServerException/>');
  });

  it('fails a body that ends short of its length', async () => {
    const answer = await qgisGet(`${origin}/short`, connections);
    await assert.rejects(bytes(answer.body), BadGateway);
  });

  it('refuses no answer, an answer that is not HTTP, and a server that cannot be reached', async () => {
    await assert.rejects(qgisGet(`${origin}/silent`, connections), /closed the connection without an answer/);
    await assert.rejects(qgisGet(`${origin}/garbage`, connections), /something other than HTTP/);
    await assert.rejects(qgisGet(`http://127.0.0.1:${await freePort()}/`, connections), /cannot be reached/);
  });
});

describe('qgisRequest', () => {
  it('writes a GET, or a POST of a body with its type and length', () => {
    const url = 'http://127.0.0.1:8080/ows/?MAP=a.qgs&SERVICE=STEWARD';
    assert.equal(
      qgisRequest(url).bytes.toString('latin1'),
      'GET /ows/?MAP=a.qgs&SERVICE=STEWARD HTTP/1.0\r\nHost: 127.0.0.1:8080\r\n\r\n',
    );
    const body = { type: 'application/x-www-form-urlencoded', bytes: Buffer.from('SLD=PHg-') };
    assert.equal(
      qgisRequest(url, body).bytes.toString('latin1'),
      'POST /ows/?MAP=a.qgs&SERVICE=STEWARD HTTP/1.0\r\nHost: 127.0.0.1:8080\r\n' +
        'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 8\r\n\r\nSLD=PHg-',
    );
  });
});
