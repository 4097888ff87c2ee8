import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { MAX_HEAD_BYTES, readHead } from './http-head.js';

/** QGIS Server 3.22's `qgis_mapserver` heads, as it wrote them for a GetMap and a refused one. */
const MAP_HEAD = 'HTTP/1.0 200 OK\r\nServer: QGIS\r\nContent-Length: 1515\r\nContent-Type: image/png\r\n\r\n';
const REFUSED_HEAD =
  'HTTP/1.0 400 Bad Request\r\nServer: QGIS\r\nContent-Length: 235\r\nContent-Type: text/xml; charset=utf-8\r\n\r\n';
const PNG_START = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function answer(head: string, body: Buffer = PNG_START): Buffer {
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

describe('readHead', () => {
  it("reads QGIS Server's map head, and where its body starts", () => {
    const bytes = answer(MAP_HEAD);
    const head = readHead(bytes);
    assert.ok(head);
    assert.equal(head.status, 200);
    assert.deepEqual(
      [...head.headers],
      [
        ['server', 'QGIS'],
        ['content-length', '1515'],
        ['content-type', 'image/png'],
      ],
    );
    assert.deepEqual(bytes.subarray(head.size), PNG_START);
  });

  it("reads a refusal's status and a content type with a parameter", () => {
    const head = readHead(answer(REFUSED_HEAD, Buffer.from('<ServiceExceptionReport/>')));
    assert.equal(head?.status, 400);
    assert.equal(head?.headers.get('content-type'), 'text/xml; charset=utf-8');
  });

  it('waits for the blank line, however the head is cut', () => {
    for (let cut = 0; cut < MAP_HEAD.length; cut++) {
      assert.equal(readHead(Buffer.from(MAP_HEAD.slice(0, cut), 'latin1')), undefined, `cut at ${cut}`);
    }
  });

  it('reads HTTP/1.1, a status line without a reason, spaces around values and names in any case', () => {
    const head = readHead(answer('HTTP/1.1 204\r\nX-Odd:  a: b \r\nCONTENT-TYPE:image/png\r\n\r\n'));
    assert.equal(head?.status, 204);
    assert.equal(head?.headers.get('x-odd'), 'a: b');
    assert.equal(head?.headers.get('content-type'), 'image/png');
  });

  it('refuses what is not an HTTP/1.x answer as soon as its first bytes say so', () => {
    assert.equal(readHead(Buffer.from('SSH-2.0-OpenSSH\r\n')), null);
    assert.equal(readHead(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n')), null);
    assert.equal(readHead(Buffer.from('HTTP/2 200\r\n\r\n')), null);
    assert.equal(readHead(Buffer.from('HTTP/1.0 20x OK\r\n\r\n')), null);
    assert.equal(readHead(Buffer.from('HTTP/1.0 2000 OK\r\n\r\n')), null);
    assert.equal(readHead(Buffer.from('HTTP/1.0 200\r\n\r\n'))?.status, 200);
  });

  it('refuses a head longer than any server writes', () => {
    const endless = Buffer.concat([Buffer.from('HTTP/1.0 200 OK\r\n'), Buffer.alloc(MAX_HEAD_BYTES, 'a')]);
    assert.equal(readHead(endless), null);
  });
});
