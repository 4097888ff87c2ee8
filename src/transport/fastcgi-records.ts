/**
 * FastCGI's records, as the web server's side of the protocol writes a responder's request and
 * reads its answer (the FastCGI 1.0 specification). A connection carries one request at a time,
 * so every request has the same id and can be encoded once and sent again as it is.
 */

export const RecordType = {
  BeginRequest: 1,
  EndRequest: 3,
  Params: 4,
  Stdin: 5,
  Stdout: 6,
  Stderr: 7,
} as const;

export interface FastcgiRecord {
  type: number;
  content: Buffer;
}

const VERSION = 1;
const HEADER_BYTES = 8;
/** The longest content one record holds (its length is two bytes). */
const MAX_CONTENT_BYTES = 0xffff;
const REQUEST_ID = 1;
const RESPONDER_ROLE = 1;
/** BEGIN_REQUEST's body: the role (two bytes), the flags (one byte) and five reserved bytes. */
const BEGIN_BODY_BYTES = 8;
/** Names and values shorter than this have their length in one byte, longer ones in four. */
const SHORT_LENGTH_LIMIT = 0x80;
const LONG_LENGTH_FLAG = 0x80000000;
/** END_REQUEST's protocol status for a request the application answered. */
export const REQUEST_COMPLETE = 0;

function record(type: number, content: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header[0] = VERSION;
  header[1] = type;
  header.writeUInt16BE(REQUEST_ID, 2);
  header.writeUInt16BE(content.length, 4);
  return Buffer.concat([header, content]);
}

/** The records of one stream: its content cut into records, then the empty record that ends it. */
function stream(type: number, content: Buffer): Buffer[] {
  const records: Buffer[] = [];
  for (let at = 0; at < content.length; at += MAX_CONTENT_BYTES) {
    records.push(record(type, content.subarray(at, at + MAX_CONTENT_BYTES)));
  }
  records.push(record(type, Buffer.alloc(0)));
  return records;
}

function nameValueLength(length: number): Buffer {
  if (length < SHORT_LENGTH_LIMIT) return Buffer.from([length]);
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE((length | LONG_LENGTH_FLAG) >>> 0);
  return bytes;
}

/** Name-value pairs as PARAMS carries them: each name's and value's length, then their bytes. */
export function encodeParams(params: ReadonlyArray<readonly [string, string]>): Buffer {
  return Buffer.concat(
    params.flatMap(([name, value]) => {
      const nameBytes = Buffer.from(name, 'utf8');
      const valueBytes = Buffer.from(value, 'utf8');
      return [nameValueLength(nameBytes.length), nameValueLength(valueBytes.length), nameBytes, valueBytes];
    }),
  );
}

/**
 * A responder's whole request: BEGIN_REQUEST, the parameters, the empty PARAMS record that ends
 * them, then STDIN with the body (none for a GET). BEGIN_REQUEST's flags are clear: without
 * FCGI_KEEP_CONN, the application closes the connection once it has answered.
 */
export function responderRequest(
  params: ReadonlyArray<readonly [string, string]>,
  body: Buffer = Buffer.alloc(0),
): Buffer {
  const begin = Buffer.alloc(BEGIN_BODY_BYTES);
  begin.writeUInt16BE(RESPONDER_ROLE, 0);
  return Buffer.concat([
    record(RecordType.BeginRequest, begin),
    ...stream(RecordType.Params, encodeParams(params)),
    ...stream(RecordType.Stdin, body),
  ]);
}

/** END_REQUEST's protocol status (0: the request was answered). */
export function protocolStatus(endRequest: FastcgiRecord): number {
  return endRequest.content[4] ?? -1;
}

/** Bytes that are not FastCGI records of version 1. */
export class NotFastcgi extends Error {}

/** Cuts the bytes of a connection into records, whatever pieces they arrive in. */
export class RecordReader {
  private pending: Buffer = Buffer.alloc(0);

  /** The records `chunk` completes, in order; the bytes of an unfinished one wait for the next chunk. */
  read(chunk: Buffer): FastcgiRecord[] {
    const bytes = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const records: FastcgiRecord[] = [];
    let at = 0;
    while (bytes.length - at >= HEADER_BYTES) {
      if (bytes[at] !== VERSION) throw new NotFastcgi(`a record of version ${bytes[at]}`);
      const contentLength = bytes.readUInt16BE(at + 4);
      const end = at + HEADER_BYTES + contentLength + (bytes[at + 6] ?? 0);
      if (bytes.length < end) break;
      records.push({
        type: bytes[at + 1] ?? 0,
        content: bytes.subarray(at + HEADER_BYTES, at + HEADER_BYTES + contentLength),
      });
      at = end;
    }
    this.pending = bytes.subarray(at);
    return records;
  }
}
