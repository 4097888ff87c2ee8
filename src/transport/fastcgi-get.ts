import { createConnection, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';

import { type ServerAddress } from '../config.js';
import { BadGateway, GatewayTimeout, StewardError } from '../errors.js';
import {
  type FastcgiRecord,
  NotFastcgi,
  protocolStatus,
  RecordReader,
  RecordType,
  REQUEST_COMPLETE,
} from './fastcgi-records.js';
import { type AnswerHead, readCgiHead } from './http-head.js';
import { contentLength, QGIS_SERVER_TIMEOUT_MS, type QgisAnswer, unreachable } from './qgis-get.js';

/** What of the application's STDERR a failure's message quotes at most. */
const MAX_STDERR_CHARS = 500;
const EMPTY: Buffer = Buffer.alloc(0);

/** A request that failed before any of it reached QGIS Server (the connection was refused): it may be sent again. */
export class NotDelivered extends BadGateway {}

/** A request whose process closed its connection before any answer (it died): a GET may be sent again. */
export class NoAnswer extends BadGateway {}

/**
 * Sends `request` (the bytes of `responderRequest`) to the FastCGI application at `address` on a
 * connection of its own, and reads the CGI answer its STDOUT records carry. As with the HTTP
 * client, a body that came with its head goes back whole, and a longer one as a stream fed by
 * the records that follow. `onSent` is called once the request has been written, `onClosed` once
 * the connection has closed: until then the application is busy with it.
 */
export function fastcgiGet(
  address: ServerAddress,
  request: Buffer,
  onSent: (() => void) | undefined,
  onClosed: () => void,
): Promise<QgisAnswer> {
  const socket = createConnection(address);
  socket.once('close', onClosed);
  socket.setTimeout(QGIS_SERVER_TIMEOUT_MS, () =>
    socket.destroy(new GatewayTimeout('QGIS Server did not answer in time', { code: 'qgis_server_timeout' })),
  );
  return new Promise((resolve, reject) => new FastcgiAnswer(socket, resolve, reject).send(request, onSent));
}

/** The answer to one request, read from its connection's records as they arrive. */
class FastcgiAnswer {
  private readonly records = new RecordReader();
  private connected = false;
  private head: AnswerHead | undefined;
  /** STDOUT's bytes until the head is complete. */
  private headBytes: Buffer = EMPTY;
  /** The body's bytes received before it is handed on. */
  private bodyChunks: Buffer[] = [];
  private bodyBytes = 0;
  private stream: PassThrough | undefined;
  /** Whether the promise is settled: with the whole answer, its head and a stream, or a failure. */
  private settled = false;
  /** Whether the request is over: END_REQUEST came, or it failed. */
  private over = false;
  private stderr = '';

  constructor(
    private readonly socket: Socket,
    private readonly resolve: (answer: QgisAnswer) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  send(request: Buffer, onSent: (() => void) | undefined): void {
    this.socket.write(request, (error) => {
      if (!error) onSent?.();
    });
    this.socket
      .once('connect', () => (this.connected = true))
      .on('data', (chunk: Buffer) => this.read(chunk))
      .on('error', (error) => this.fail(error))
      .once('close', () => {
        if (!this.over) this.fail(this.closedEarly());
      });
  }

  private read(chunk: Buffer): void {
    let records: FastcgiRecord[];
    try {
      records = this.records.read(chunk);
    } catch (error) {
      if (!(error instanceof NotFastcgi)) throw error;
      return this.fail(new BadGateway(`QGIS Server answered something other than FastCGI: ${error.message}`));
    }
    for (const record of records) {
      if (this.over) return;
      if (record.type === RecordType.EndRequest) this.end(record);
      else if (record.type === RecordType.Stderr) this.readStderr(record.content);
      else if (record.type === RecordType.Stdout && !this.answeredWhole) this.stdout(record.content);
    }
    if (this.head && !this.settled && !this.over) this.handOnAsStream(this.head);
  }

  /** Whether the answer was handed on whole: whatever else its STDOUT carries is not the answer's. */
  private get answeredWhole(): boolean {
    return this.settled && this.stream === undefined;
  }

  private readStderr(content: Buffer): void {
    this.stderr = (this.stderr + content.toString('utf8')).slice(0, MAX_STDERR_CHARS);
  }

  private stdout(content: Buffer): void {
    if (this.head) return this.bodyPart(content);
    this.headBytes = this.headBytes.length === 0 ? content : Buffer.concat([this.headBytes, content]);
    const head = readCgiHead(this.headBytes);
    if (head === undefined) return;
    if (head === null) return this.fail(new BadGateway('QGIS Server answered something other than a CGI answer'));
    this.head = head;
    const rest = this.headBytes.subarray(head.size);
    this.headBytes = EMPTY;
    this.bodyPart(rest);
  }

  private bodyPart(bytes: Buffer): void {
    this.bodyBytes += bytes.length;
    if (this.stream) {
      if (bytes.length > 0 && !this.stream.write(bytes)) this.socket.pause();
      return;
    }
    if (bytes.length > 0) this.bodyChunks.push(bytes);
    const length = contentLength((this.head as AnswerHead).headers);
    if (length !== undefined && this.bodyBytes >= length) this.answerWhole(length);
  }

  private answerWhole(length?: number): void {
    const { status, headers } = this.head as AnswerHead;
    const body = Buffer.concat(this.bodyChunks);
    this.bodyChunks = [];
    this.settled = true;
    this.resolve({ status, headers, body: length === undefined ? body : body.subarray(0, length) });
  }

  /** The body goes on as a stream: the rest of it comes in later records. */
  private handOnAsStream({ status, headers }: AnswerHead): void {
    const stream = new PassThrough();
    for (const chunk of this.bodyChunks) stream.write(chunk);
    this.bodyChunks = [];
    stream.on('drain', () => this.socket.resume());
    // A reader that stops (a client that left) ends the request.
    stream.once('close', () => this.socket.destroy());
    this.stream = stream;
    this.settled = true;
    this.resolve({ status, headers, body: stream });
  }

  private end(endRequest: FastcgiRecord): void {
    this.over = true;
    // Closed on the next turn: a whole map's reply is written in this one, and the close need not
    // come between QGIS Server's answer and it.
    setImmediate(() => this.socket.destroy());
    const length = this.head && contentLength(this.head.headers);
    if (protocolStatus(endRequest) !== REQUEST_COMPLETE) {
      this.fail(new BadGateway(`QGIS Server refused the request (FastCGI status ${protocolStatus(endRequest)})`));
    } else if (!this.head) {
      this.fail(new BadGateway(`QGIS Server ended the request without an answer${this.said()}`));
    } else if (length !== undefined && this.bodyBytes < length) {
      this.fail(new BadGateway('QGIS Server ended its answer early'));
    } else if (this.stream) {
      this.stream.end();
    } else if (!this.settled) {
      this.answerWhole();
    }
  }

  private closedEarly(): BadGateway {
    return this.head
      ? new BadGateway('QGIS Server ended its answer early')
      : new NoAnswer(`QGIS Server closed the connection without an answer${this.said()}`);
  }

  /** What QGIS Server wrote to STDERR, for a failure's message. */
  private said(): string {
    return this.stderr === '' ? '' : `: ${this.stderr.replace(/\s+/g, ' ').trim()}`;
  }

  private fail(error: Error): void {
    const failure = error instanceof StewardError ? error : this.lost(error);
    this.over = true;
    this.socket.destroy();
    if (this.stream) this.stream.destroy(failure);
    else if (!this.settled) this.reject(failure);
    this.settled = true;
  }

  /** The failure of the connection with `error`: before it was made, before any answer, or during one. */
  private lost(error: Error): BadGateway {
    const reached = unreachable(error);
    const options = { clientMessage: reached.clientMessage, code: reached.code };
    if (!this.connected) return new NotDelivered(reached.message, options);
    if (!this.head) return new NoAnswer(reached.message, options);
    return reached;
  }
}
