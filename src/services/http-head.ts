/** The status line and headers that start an HTTP/1.x answer. */
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
  const headers = new Map<string, string>();
  for (let line = text.indexOf('\r\n') + 2; line > 1 && line < text.length;) {
    const next = text.indexOf('\r\n', line);
    const lineEnd = next < 0 ? text.length : next;
    const colon = text.indexOf(':', line);
    if (colon > line && colon < lineEnd) {
      headers.set(text.slice(line, colon).trim().toLowerCase(), text.slice(colon + 1, lineEnd).trim());
    }
    line = next < 0 ? text.length : next + 2;
  }
  return { status, headers, size: end + HEAD_END.length };
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
