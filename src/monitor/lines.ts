/** Framing of the monitoring protocol (docs/monitoring-protocol.md): JSON messages, one per `\n`-terminated UTF-8 line. */

export const MAX_LINE_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

export interface LineHandlers {
  line(text: string): void;
  /** A line grew past the limit; its bytes are being thrown away up to the next newline. */
  overflow(): void;
}

/**
 * Splits a byte stream into lines, holding at most `maxBytes` of an unfinished line in memory; the
 * bound may change between lines (a stranger's first line is held to less than a known peer's).
 */
export class LineDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;

  constructor(
    private readonly handlers: LineHandlers,
    public maxBytes = MAX_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      this.append(chunk.subarray(start, end));
      this.finishLine();
      start = end + 1;
    }
    this.append(chunk.subarray(start));
  }

  private append(part: Buffer): void {
    if (this.discarding || part.length === 0) return;
    if (this.pendingBytes + part.length > this.maxBytes) {
      this.pending = [];
      this.pendingBytes = 0;
      this.discarding = true;
      this.handlers.overflow();
      return;
    }
    this.pending.push(part);
    this.pendingBytes += part.length;
  }

  private finishLine(): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    const text = Buffer.concat(this.pending, this.pendingBytes).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    this.handlers.line(text);
  }
}

export function encodeLine(message: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(message)}\n`, 'utf8');
}
