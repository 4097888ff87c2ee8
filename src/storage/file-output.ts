/**
 * A new file written as a stream's chunks arrive: the chunks are gathered into one write of 4 MiB
 * while the last one is in flight (a socket's 64 KiB pieces reach the disk in a few hundred system
 * calls a GiB). The writes go straight to the disk (O_DIRECT) where the file system allows it: the
 * file is flushed at the end anyway, and copying a GiB into the page cache, then writing it back,
 * cost the API several seconds of CPU a GiB when the cache's pages were fresh memory (cp's 0.3).
 * Elsewhere a flush is started every 64 MiB so that the disk writes while the stream still arrives
 * and little is left to flush at the end. The file's CRC-32 is summed as it is written when asked:
 * with the addon native/checked-writes.c, on the thread that writes each batch, off the event loop
 * (a CRC-32 of a GiB is half a second of CPU), or by a worker thread writing the file, of each
 * batch it sends; without the addon, of each chunk as it comes.
 */
import { constants } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { isMainThread } from 'node:worker_threads';
import { crc32 } from 'node:zlib';

import { writePieces } from './atomic-file.js';
import { nativeAddon } from './native-addon.js';

interface CheckedWrites {
  /** Sums `checked` bytes of `buffer` on from `crc`, writes `length` of them to `fd` at `position`; the new CRC-32. */
  writeChecked(
    fd: number,
    buffer: Uint8Array,
    length: number,
    checked: number,
    position: number,
    crc: number,
  ): Promise<number>;
}

/** Bytes gathered before one write. */
const WRITE_BATCH = 4 * 1024 * 1024;
/** Bytes written between flushes started while the file is written. */
const FLUSH_EVERY = 64 * 1024 * 1024;

/** Direct writes take whole blocks: sizes and offsets in memory and in the file are multiples of this. */
const BLOCK = 4096;
/** WebAssembly's pages, of which a batch buffer is made. */
const WASM_PAGE = 64 * 1024;

/** Batch buffers kept for the next file: allocating 4 MiB for each file of a bundle of many would churn. */
const spares: Buffer[] = [];
const MAX_SPARES = 4;

/**
 * A WebAssembly memory is mapped on its own, so it begins on a page boundary as direct writes
 * need; a Buffer's memory comes from malloc, aligned to 16 bytes.
 */
function batchBuffer(): Buffer {
  const pages = WRITE_BATCH / WASM_PAGE;
  return spares.pop() ?? Buffer.from(new WebAssembly.Memory({ initial: pages, maximum: pages }).buffer);
}

function release(buffer: Buffer | undefined): void {
  if (buffer && spares.length < MAX_SPARES) spares.push(buffer);
}

/**
 * The chunks are copied into one of two batch buffers, one filling while the other is written:
 * holding the chunks themselves until written kept them alive past two scavenges, into the old
 * generation, where their bytes (a socket's buffers are external memory) set off a full
 * mark-compact every 64 MiB.
 */
export class FileOutput {
  private filling: Buffer | undefined;
  private spare: Buffer | undefined;
  private batched = 0;
  private written = 0;
  private flushedAt = 0;
  /** Bytes handed to writes: where the next batch goes in the file. */
  private sent = 0;
  private crc = 0;
  private writing: Promise<void> = Promise.resolve();
  private flushing: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;
  private readonly addon = nativeAddon<CheckedWrites>('checked-writes');

  private constructor(
    private readonly handle: FileHandle,
    /** Whether writes go straight to the disk: then whole blocks only. */
    private readonly direct: boolean,
    /** Whether the CRC-32 of the bytes is summed. */
    private readonly summed: boolean,
  ) {}

  /** Creates the file at `path`, which must not exist; `summed`: sums its CRC-32 (`checksum()`). */
  static async create(path: string, options: { summed?: boolean } = {}): Promise<FileOutput> {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
    const summed = options.summed === true;
    try {
      return new FileOutput(await open(path, flags | constants.O_DIRECT, 0o644), true, summed);
    } catch (error) {
      // EINVAL: a file system without direct writes. Linux refuses them only once it has made the
      // file, which was not there (O_EXCL): it is this call's, made again for writes through the cache.
      if ((error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
      await rm(path, { force: true });
      return new FileOutput(await open(path, flags, 0o644), false, summed);
    }
  }

  /** The CRC-32 of the bytes written, once finished (0 unless `summed`). */
  checksum(): number {
    return this.crc;
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.summed && !this.addon) this.crc = crc32(chunk, this.crc);
    for (let at = 0; at < chunk.length;) {
      this.filling ??= batchBuffer();
      const copied = chunk.copy(this.filling, this.batched, at);
      this.batched += copied;
      at += copied;
      if (this.batched === this.filling.length) await this.send();
    }
  }

  /** Writes the batch once the write in flight is done; its failure surfaces at the next write or at the end. */
  private async send(): Promise<void> {
    await this.writing;
    this.rethrow();
    const batch = this.filling;
    const bytes = this.batched;
    this.filling = this.spare;
    this.spare = batch;
    this.batched = 0;
    if (!batch || bytes === 0) return;
    // Only the last batch is short: a direct write of it takes whole blocks, cut back at the end.
    const whole = this.direct ? Math.ceil(bytes / BLOCK) * BLOCK : bytes;
    batch.fill(0, bytes, whole);
    this.writing = this.writeBatch(batch.subarray(0, whole), bytes).then(
      () => this.wrote(bytes),
      (error: unknown) => void (this.failure ??= { error }),
    );
  }

  /**
   * Writes `batch` where the last one ended, summing its first `bytes` when asked: on the pool with
   * the write on the event loop's thread, else here, on a thread that has its own niceness rather
   * than the pool's, which the event loop's file work shares (services/receipt-thread.ts).
   */
  private async writeBatch(batch: Buffer, bytes: number): Promise<void> {
    const position = this.sent;
    this.sent += batch.length;
    if (!this.addon) return writePieces(this.handle, [batch]);
    if (this.summed && !isMainThread) this.crc = crc32(batch.subarray(0, bytes), this.crc);
    const checked = this.summed && isMainThread ? bytes : 0;
    this.crc = await this.addon.writeChecked(this.handle.fd, batch, batch.length, checked, position, this.crc);
  }

  private wrote(bytes: number): void {
    this.written += bytes;
    if (this.direct || this.written - this.flushedAt < FLUSH_EVERY) return;
    this.flushedAt = this.written;
    this.flushing = this.flushing
      .then(() => this.handle.datasync())
      .catch((error: unknown) => void (this.failure ??= { error }));
  }

  private rethrow(): void {
    if (this.failure) throw this.failure.error;
  }

  /** Writes the rest, flushes the file and closes it. */
  async finish(): Promise<void> {
    await this.send();
    await this.writing;
    await this.flushing;
    this.rethrow();
    if (this.direct && this.written % BLOCK !== 0) await this.handle.truncate(this.written);
    await this.handle.sync();
    await this.handle.close();
    this.releaseBuffers();
  }

  private releaseBuffers(): void {
    release(this.filling);
    release(this.spare);
    this.filling = undefined;
    this.spare = undefined;
  }

  /** Closes the file once its writes are done, whatever they came to; the caller removes it. */
  async abandon(): Promise<void> {
    await this.writing;
    await this.flushing;
    await this.handle.close().catch(() => undefined);
    this.releaseBuffers();
  }
}
