import { createHash } from 'node:crypto';

/**
 * What was read out of pieces of markup, by the digest of their bytes, shared by every document of
 * the process: a project parsed again (a version restored, a file read back) mostly holds the same
 * layers byte for byte, which are then read once. Bounded: the oldest entries go first.
 */
export class MarkupMemo<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly capacity: number) {}

  private static key(bytes: Uint8Array): string {
    return createHash('sha256').update(bytes).digest('base64');
  }

  /** What `read` makes of `bytes`, read once for the same bytes. */
  get(bytes: Uint8Array, read: () => T): T {
    return this.byKey(MarkupMemo.key(bytes), read);
  }

  /** What `read` makes of markup the caller names by `key` (which must change when the markup does), read once. */
  byKey(key: string, read: () => T): T {
    const known = this.entries.get(key);
    if (known !== undefined) return known;
    const value = read();
    this.set(key, value);
    return value;
  }

  /** Remembers what was read out of `bytes` elsewhere. */
  remember(bytes: Uint8Array, value: T): void {
    this.set(MarkupMemo.key(bytes), value);
  }

  private set(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    const oldest = this.entries.keys().next().value;
    if (this.entries.size > this.capacity && oldest !== undefined) this.entries.delete(oldest);
  }
}
