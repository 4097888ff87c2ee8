/**
 * Measured on parsed projects: a document takes about 2.2 bytes of heap per character of its text
 * (V8 keeps the text in two bytes a character, since QGIS's version names are not Latin-1, and the
 * layers stay slices of it), whatever the number of layers.
 */
const BYTES_PER_CHARACTER = 2.2;

/** The memory a project parsed from `length` characters is estimated to hold. */
export function estimatedBytes(length: number): number {
  return Math.ceil(length * BYTES_PER_CHARACTER);
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

  constructor(private readonly limit: number) {}

  /** The entry, now the most recently used. */
  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  /** The entry, without counting as a use. */
  peek(key: string): T | undefined {
    return this.entries.get(key);
  }

  set(key: string, entry: T): void {
    this.delete(key);
    this.entries.set(key, entry);
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
