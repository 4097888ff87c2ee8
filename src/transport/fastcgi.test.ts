import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { after, before, describe, it } from '../../test/support/node-test.js';
import { type ServerAddress } from '../config.js';
import { freePort } from '../runtime/ports.js';
import { bytes } from '../services/maps.js';
import { NoAnswer, NotDelivered } from './fastcgi-get.js';
import { encodeParams, type FastcgiRecord, RecordReader, RecordType, responderRequest } from './fastcgi-records.js';
import { readCgiHead } from './http-head.js';
import { cgiParams, FastcgiQgisClient } from './qgis-fastcgi.js';

/** Name-value pairs read back from PARAMS' bytes, as an application reads them (FastCGI 1.0, 3.4). */
function decodeParams(bytes: Buffer): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  let at = 0;
  const length = (): number => {
    const first = bytes[at] ?? 0;
    if (first < 0x80) {
      at += 1;
      return first;
    }
    const long = bytes.readUInt32BE(at) & 0x7fffffff;
    at += 4;
    return long;
  };
  while (at < bytes.length) {
    const nameLength = length();
    const valueLength = length();
    const name = bytes.toString('utf8', at, at + nameLength);
    const value = bytes.toString('utf8', at + nameLength, at + nameLength + valueLength);
    at += nameLength + valueLength;
    pairs.push([name, value]);
  }
  return pairs;
}

/** `bytes` cut into pieces of `size` bytes, as a connection may deliver them. */
function pieces(bytes: Buffer, size: number): Buffer[] {
  const cut: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) cut.push(bytes.subarray(at, at + size));
  return cut;
}

/** A record as an application writes one: header, content, then padding to a multiple of 8 bytes. */
function paddedRecord(type: number, content: string | Buffer): Buffer {
  const body = Buffer.isBuffer(content) ? content : Buffer.from(content, 'latin1');
  const padding = (8 - (body.length % 8)) % 8;
  const header = Buffer.from([1, type, 0, 1, body.length >> 8, body.length & 0xff, padding, 0]);
  return Buffer.concat([header, body, Buffer.alloc(padding)]);
}

function readAll(bytes: Buffer, size: number): FastcgiRecord[] {
  const reader = new RecordReader();
  return pieces(bytes, size).flatMap((piece) => reader.read(piece));
}

describe('FastCGI records', () => {
  it('gives a name or value its length in one byte below 128, in four with the top bit set from 128', () => {
    const long = 'x'.repeat(200);
    const bytes = encodeParams([
      ['QUERY_STRING', long],
      ['SERVER_NAME', ''],
    ]);
    assert.deepEqual([...bytes.subarray(0, 5)], [12, 0x80, 0, 0, 200]);
    assert.equal(bytes.toString('latin1', 5, 17), 'QUERY_STRING');
    assert.deepEqual([...bytes.subarray(217, 219)], [11, 0]);
    assert.deepEqual(decodeParams(bytes), [
      ['QUERY_STRING', long],
      ['SERVER_NAME', ''],
    ]);
  });

  it("writes a responder's request: BEGIN_REQUEST, the parameters over as many records as they need, their end, an empty STDIN", () => {
    const query = 'LAYERS=' + 'a,'.repeat(40_000);
    const params: Array<[string, string]> = [
      ['QUERY_STRING', query],
      ['REQUEST_METHOD', 'GET'],
    ];
    const records = readAll(responderRequest(params), 1000);
    assert.deepEqual(
      records.map((record) => [record.type, record.content.length]),
      [
        [RecordType.BeginRequest, 8],
        [RecordType.Params, 0xffff],
        [RecordType.Params, encodeParams(params).length - 0xffff],
        [RecordType.Params, 0],
        [RecordType.Stdin, 0],
      ],
    );
    const [begin] = records;
    // The responder role, and no FCGI_KEEP_CONN: QGIS Server closes the connection after its answer.
    assert.deepEqual([...(begin?.content ?? [])], [0, 1, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(decodeParams(Buffer.concat(records.slice(1, 3).map((record) => record.content))), params);
  });

  it('writes a POST: its body over as many STDIN records as it needs, then their end, with its type and length', () => {
    const body = { type: 'application/x-www-form-urlencoded', bytes: Buffer.from(`SLD=${'QUJD'.repeat(20_000)}`) };
    const params = cgiParams('http://127.0.0.1:8080/ows/?MAP=a.qgs&SERVICE=STEWARD', body);
    assert.deepEqual(
      params.filter(([name]) => name.startsWith('REQUEST_METHOD') || name.startsWith('CONTENT_')),
      [
        ['REQUEST_METHOD', 'POST'],
        ['CONTENT_TYPE', body.type],
        ['CONTENT_LENGTH', String(body.bytes.length)],
      ],
    );
    const records = readAll(responderRequest(params, body.bytes), 4096);
    const stdin = records.filter((record) => record.type === RecordType.Stdin);
    assert.deepEqual(
      stdin.map((record) => record.content.length),
      [0xffff, body.bytes.length - 0xffff, 0],
    );
    assert.deepEqual(Buffer.concat(stdin.map((record) => record.content)), body.bytes);
  });

  it('reads padded records whatever pieces they arrive in', () => {
    const answer = Buffer.concat([
      paddedRecord(RecordType.Stdout, 'Content-Type: text/plain\n\nhello'),
      paddedRecord(RecordType.Stderr, 'a warning'),
      paddedRecord(RecordType.Stdout, ''),
      paddedRecord(RecordType.EndRequest, '\0\0\0\0\0\0\0\0'),
    ]);
    for (const size of [1, 3, 7, 8, 13, answer.length]) {
      const records = readAll(answer, size);
      assert.deepEqual(
        records.map((record) => [record.type, record.content.toString('latin1')]),
        [
          [RecordType.Stdout, 'Content-Type: text/plain\n\nhello'],
          [RecordType.Stderr, 'a warning'],
          [RecordType.Stdout, ''],
          [RecordType.EndRequest, '\0\0\0\0\0\0\0\0'],
        ],
        `pieces of ${size} bytes`,
      );
    }
  });

  it('refuses bytes that are not FastCGI', () => {
    assert.throws(() => new RecordReader().read(Buffer.from('HTTP/1.1 200 OK\r\n')), /version 72/);
  });
});

describe('CGI heads', () => {
  it("reads QGIS Server's head: LF lines, a Status header with its odd space, 200 without one", () => {
    const refused = Buffer.from(
      'Content-Type: text/xml; charset=utf-8\nServer:  QGIS FCGI server - QGIS version 3.22\nStatus:  400\n\n<x/>',
    );
    const head = readCgiHead(refused);
    assert.ok(head);
    assert.equal(head.status, 400);
    assert.deepEqual(
      [...head.headers],
      [
        ['content-type', 'text/xml; charset=utf-8'],
        ['server', 'QGIS FCGI server - QGIS version 3.22'],
      ],
    );
    assert.equal(refused.toString('latin1', head.size), '<x/>');
    assert.equal(readCgiHead(Buffer.from('Content-Type: image/png\r\nContent-Length: 3\r\n\r\nPNG'))?.status, 200);
    assert.equal(readCgiHead(Buffer.from('Status: 404 Not Found\n\n'))?.status, 404);
  });

  it('waits for the blank line, and refuses a status that is not one', () => {
    assert.equal(readCgiHead(Buffer.from('Content-Type: image/png\nContent-Len')), undefined);
    assert.equal(readCgiHead(Buffer.from('Status: fine\n\n')), null);
    assert.equal(readCgiHead(Buffer.from('Status: 2000\n\n')), null);
    assert.equal(readCgiHead(Buffer.alloc(70 * 1024, 'a')), null);
  });
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 0xff]);
const stdout = (content: string | Buffer): Buffer => paddedRecord(RecordType.Stdout, content);
const END = paddedRecord(RecordType.EndRequest, Buffer.alloc(8));

/**
 * A FastCGI application that answers each request with the pieces `answers` gives for its query
 * string, written apart, then closes the connection; `requests` lists the query strings it read,
 * `params` each request's parameters.
 */
function application(answers: Record<string, Buffer[]>): {
  server: Server;
  requests: string[];
  params: Array<Map<string, string>>;
} {
  const requests: string[] = [];
  const received: Array<Map<string, string>> = [];
  const server = createServer((socket) => {
    const reader = new RecordReader();
    let params = Buffer.alloc(0);
    const answer = async (query: string): Promise<void> => {
      requests.push(query);
      for (const piece of answers[query] ?? []) {
        socket.write(piece);
        await sleep(5);
      }
      socket.end();
    };
    socket.on('data', (chunk: Buffer) => {
      for (const record of reader.read(chunk)) {
        if (record.type === RecordType.Params) params = Buffer.concat([params, record.content]);
        if (record.type !== RecordType.Stdin) continue;
        received.push(new Map(decodeParams(params)));
        void answer(received.at(-1)?.get('QUERY_STRING') ?? '');
      }
    });
  });
  return { server, requests, params: received };
}

async function listen(server: Server): Promise<ServerAddress> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
}

describe('FastcgiQgisClient', () => {
  const head = `Content-Type: image/png\nContent-Length: ${PNG.length}\nServer:  QGIS FCGI server\n\n`;
  const { server, requests, params } = application({
    whole: [Buffer.concat([stdout(Buffer.concat([Buffer.from(head), PNG])), stdout(''), END])],
    pieces: [
      stdout(head.slice(0, 20)),
      stdout(Buffer.concat([Buffer.from(head.slice(20)), PNG.subarray(0, 5)])),
      stdout(PNG.subarray(5)),
      Buffer.concat([stdout(''), END]),
    ],
    refused: [stdout('Status:  500\nContent-Type: text/xml\n\n<ServerException/>'), END],
    short: [stdout(`Content-Type: image/png\nContent-Length: ${PNG.length + 1}\n\n`), stdout(PNG), END],
    nothing: [paddedRecord(RecordType.Stderr, 'cannot open\nthe project'), END],
    silent: [],
    slow: [Buffer.from([]), Buffer.from([]), Buffer.from([]), stdout(Buffer.concat([Buffer.from(head), PNG])), END],
    garbage: [Buffer.from('HTTP/1.1 200 OK\r\n\r\n')],
  });
  let address: ServerAddress;
  let client: FastcgiQgisClient;
  const get = (
    query: string,
    through = client,
  ): Promise<Awaited<ReturnType<ReturnType<FastcgiQgisClient['prepare']>>>> =>
    through.prepare(`http://127.0.0.1:8080/ows/?${query}`)();

  before(async () => {
    address = await listen(server);
    client = new FastcgiQgisClient([address]);
  });
  after(() => server.close());

  it('passes the status, the headers and the body on, whole or streamed, whatever records they came in', async () => {
    for (const query of ['whole', 'pieces']) {
      const answer = await get(query);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-type'), 'image/png');
      assert.equal(Buffer.isBuffer(answer.body), query === 'whole', query);
      assert.deepEqual(await bytes(answer.body), PNG);
    }
    const refused = await get('refused');
    assert.equal(refused.status, 500);
    assert.equal((await bytes(refused.body)).toString(), '<ServerException/>');
  });

  it('says when the request has been written, before its answer comes', async () => {
    const heard: string[] = [];
    const answer = client
      .prepare('http://127.0.0.1:8080/ows/?slow')(() => heard.push('sent'))
      .then(() => heard.push('answered'));
    await answer;
    assert.deepEqual(heard, ['sent', 'answered']);
    await assert.rejects(
      new FastcgiQgisClient([{ host: '127.0.0.1', port: await freePort() }]).prepare(
        'http://127.0.0.1:8080/ows/?whole',
      )(() => heard.push('sent')),
    );
    assert.deepEqual(heard, ['sent', 'answered'], 'a refused request was not sent');
  });

  it('fails with a 502 when the answer is cut short, missing or not FastCGI', async () => {
    await assert.rejects(async () => bytes((await get('short')).body), /ended its answer early/);
    await assert.rejects(get('nothing'), /ended the request without an answer: cannot open the project/);
    await assert.rejects(get('silent'), /closed the connection without an answer/);
    await assert.rejects(get('garbage'), /something other than FastCGI/);
  });

  it('sends a refused or unanswered request once more to another process, never one that was answered', async () => {
    const closed = { host: '127.0.0.1', port: await freePort() };
    const twoProcesses = new FastcgiQgisClient([closed, address]);
    const before = requests.length;
    for (let round = 0; round < 4; round++) assert.deepEqual(await bytes((await get('whole', twoProcesses)).body), PNG);
    assert.equal(requests.length - before, 4);
    const pair = new FastcgiQgisClient([address, address]);
    await assert.rejects(get('silent', pair), (error: unknown) => error instanceof NoAnswer);
    assert.equal(requests.length - before, 6, 'the silent request went to both processes');
    await assert.rejects(get('nothing', pair), /ended the request without an answer/);
    await assert.rejects(async () => bytes((await get('short', pair)).body), /ended its answer early/);
    assert.equal(requests.length - before, 8, 'a request answered, however badly, is sent once');
    await assert.rejects(
      get('whole', new FastcgiQgisClient([closed])),
      (error: unknown) => error instanceof NotDelivered,
    );
  });

  it('sends each request to the process with the fewest in flight', async () => {
    const other = application({ slow: [Buffer.from([]), stdout(Buffer.concat([Buffer.from(head), PNG])), END] });
    const both = new FastcgiQgisClient([address, await listen(other.server)]);
    try {
      const before = requests.length;
      await Promise.all(Array.from({ length: 4 }, () => get('slow', both).then((answer) => bytes(answer.body))));
      assert.equal(requests.length - before, 2);
      assert.equal(other.requests.length, 2);
    } finally {
      other.server.close();
    }
  });

  it('sends the settings QGIS Server reads during a request with every request', async () => {
    const settings: Array<[string, string]> = [
      ['PGSERVICEFILE', '/etc/steward/pg_service.conf'],
      ['QGIS_SERVER_LOG_LEVEL', '1'],
    ];
    await bytes((await get('whole', new FastcgiQgisClient([address], settings))).body);
    const sent = params.at(-1);
    assert.equal(sent?.get('PGSERVICEFILE'), '/etc/steward/pg_service.conf');
    assert.equal(sent?.get('QGIS_SERVER_LOG_LEVEL'), '1');
    assert.equal(sent?.get('QUERY_STRING'), 'whole');
  });

  it("sends the parameters nginx's fastcgi_params would for the same URL", () => {
    assert.deepEqual(
      Object.fromEntries(cgiParams('http://qgis.example.org:8080/ows/?MAP=%2Fsrv%2Fa%20b.qgs&REQUEST=GetCapabilities')),
      {
        QUERY_STRING: 'MAP=%2Fsrv%2Fa%20b.qgs&REQUEST=GetCapabilities',
        REQUEST_METHOD: 'GET',
        CONTENT_TYPE: '',
        CONTENT_LENGTH: '',
        SCRIPT_NAME: '/ows/',
        REQUEST_URI: '/ows/?MAP=%2Fsrv%2Fa%20b.qgs&REQUEST=GetCapabilities',
        DOCUMENT_URI: '/ows/',
        SERVER_PROTOCOL: 'HTTP/1.0',
        REQUEST_SCHEME: 'http',
        GATEWAY_INTERFACE: 'CGI/1.1',
        SERVER_PORT: '8080',
        SERVER_NAME: '',
        REDIRECT_STATUS: '200',
        HTTP_HOST: 'qgis.example.org',
      },
    );
  });
});
