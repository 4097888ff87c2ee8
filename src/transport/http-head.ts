/** The status and headers that start an HTTP/1.x answer, or a CGI answer over FastCGI. */
export interface AnswerHead {
  status: number;
  /** The headers, names in lower case. */
  headers: Map<string, string>;
  /** The head's bytes, its closing blank line included: where the body starts. */
  size: number;
}

/** More than any server's status line and headers; past it the answer is not HTTP. */
export const MAX_HEAD_BYTES = 64 * 1024;
const HEAD_END = '\r\n\r\n';
const CGI_HEAD_END = '\n\n';
const OK = 200;
const MIN_STATUS = 100;
const MAX_STATUS = 599;
/** What every HTTP/1.x status line starts with. */
const HTTP_1 = 'HTTP/1.';
/** `HTTP/1.x NNN`: the status line's shortest form. */
const STATUS_LINE_MIN = 12;
const DIGIT_0 = 0x30;
const SPACE = 0x20;
const CR = 0x0d;

/**
 * The head at the start of `received`: undefined while its blank line has not come yet, null when
 * the bytes are not an HTTP/1.0 or 1.1 answer. It reads the status from the bytes and splits the
 * header lines once, without a regular expression or an array of lines: the smallest map's answer
 * comes after QGIS Server has drawn for milliseconds, with the API's code out of the CPU's caches,
 * and each step the head goes through then costs microseconds of the map's latency.
 */
export function readHead(received: Buffer): AnswerHead | undefined | null {
  const end = received.indexOf(HEAD_END, 0, 'latin1');
  if (end < 0) return received.length > MAX_HEAD_BYTES || !startsAsHttp(received) ? null : undefined;
  const status = statusOf(received, end);
  if (status === undefined) return null;
  const text = received.toString('latin1', 0, end);
  const statusLineEnd = text.indexOf('\n');
  const headers = statusLineEnd < 0 ? new Map<string, string>() : headerFields(text, statusLineEnd + 1);
  return { status, headers, size: end + HEAD_END.length };
}

/**
 * The head of a CGI answer, as FastCGI's STDOUT starts with one: header lines ended by LF or CRLF
 * (QGIS Server writes LF), then a blank line. The status is the `Status:` header's, 200 without
 * one, and the header itself is left out. Undefined while the blank line has not come yet, null
 * when the bytes cannot be a head.
 */
export function readCgiHead(received: Buffer): AnswerHead | undefined | null {
  const end = blankLine(received);
  if (end === undefined) return received.length > MAX_HEAD_BYTES ? null : undefined;
  const headers = headerFields(received.toString('latin1', 0, end.at), 0);
  const statusField = headers.get('status');
  headers.delete('status');
  const status = statusField === undefined ? OK : Number(/^\d{3}(?!\d)/.exec(statusField)?.[0]);
  return status >= MIN_STATUS && status <= MAX_STATUS ? { status, headers, size: end.size } : null;
}

/** Where the first blank line of `received` starts, and where the bytes after it start. */
function blankLine(received: Buffer): { at: number; size: number } | undefined {
  const lf = received.indexOf(CGI_HEAD_END, 0, 'latin1');
  const crlf = received.indexOf(HEAD_END, 0, 'latin1');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, size: crlf + HEAD_END.length };
  return lf < 0 ? undefined : { at: lf, size: lf + CGI_HEAD_END.length };
}

/** The `Name: value` lines of `text` from `from` on, ended by LF or CRLF; names in lower case. */
function headerFields(text: string, from: number): Map<string, string> {
  const headers = new Map<string, string>();
  for (let line = from; line < text.length;) {
    const next = text.indexOf('\n', line);
    const lineEnd = next < 0 ? text.length : next;
    const colon = text.indexOf(':', line);
    if (colon > line && colon < lineEnd) {
      headers.set(text.slice(line, colon).trim().toLowerCase(), text.slice(colon + 1, lineEnd).trim());
    }
    line = lineEnd + 1;
  }
  return headers;
}

/** Whether the bytes so far can begin `HTTP/1.`: anything else is refused at once. */
function startsAsHttp(received: Buffer): boolean {
  const length = Math.min(received.length, HTTP_1.length);
  return received.toString('latin1', 0, length) === HTTP_1.slice(0, length);
}

/** The status of `HTTP/1.0 NNN ...` or `HTTP/1.1 NNN ...` within the head's first `end` bytes. */
function statusOf(received: Buffer, end: number): number | undefined {
  if (end < STATUS_LINE_MIN || !startsAsHttp(received)) return undefined;
  const minor = received[HTTP_1.length];
  if ((minor !== DIGIT_0 && minor !== DIGIT_0 + 1) || received[HTTP_1.length + 1] !== SPACE) return undefined;
  let status = 0;
  for (let at = 9; at < STATUS_LINE_MIN; at++) {
    const digit = (received[at] ?? 0) - DIGIT_0;
    if (digit < 0 || digit > 9) return undefined;
    status = status * 10 + digit;
  }
  const after = received[STATUS_LINE_MIN];
  return after === SPACE || after === CR ? status : undefined;
}
