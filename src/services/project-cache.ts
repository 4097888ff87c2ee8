/**
 * A parsed document holds its tree on the heap and its layers' UTF-8 beside it, in proportion to
 * its file whether the file is Latin-1 or not; the ratio is the measured one with a margin
 * (docs/project-edits.md).
 */
const BYTES_PER_STORED_BYTE = 2.2;

/** The memory a project parsed from a file of `length` bytes is estimated to hold. */
export function estimatedBytes(length: number): number {
  return Math.ceil(length * BYTES_PER_STORED_BYTE);
}

interface Sized {
  bytes: number;
}

/**
 * Entries kept by key up to a total estimated size, dropping the least recently used first. An
 * entry larger than the whole bound is still kept, alone, until the next one arrives.
 */
export class LruCache<T extends Sized> {
  private readonly entries = new Map<string, T>();
  private total = 0;
  /** The key used last: reading it again leaves the order as it is, for a project read thousands of times a second. */
  private newest: string | undefined;

  constructor(private readonly limit: number) {}

  /** The entry, now the most recently used. */
  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || key === this.newest) return entry;
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.newest = key;
    return entry;
  }

  /** The entry, without counting as a use. */
  peek(key: string): T | undefined {
    return this.entries.get(key);
  }

  set(key: string, entry: T): void {
    this.delete(key);
    this.entries.set(key, entry);
    this.newest = key;
    this.total += entry.bytes;
    for (const [oldest, value] of this.entries) {
      if (this.total <= this.limit || oldest === key) break;
      this.entries.delete(oldest);
      this.total -= value.bytes;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    if (key === this.newest) this.newest = undefined;
    this.total -= entry.bytes;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The estimated bytes of the entries kept. */
  get bytes(): number {
    return this.total;
  }
}
