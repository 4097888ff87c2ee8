/**
 * A new file written as a stream's chunks arrive, without holding them: the chunks are gathered
 * into one write of a few MiB while the last one is in flight (a socket's 64 KiB pieces reach the
 * disk in a few hundred system calls a GiB), and a flush is started every 64 MiB so that the disk
 * writes while the stream still arrives and little is left to flush at the end.
 */
import { type FileHandle, open } from 'node:fs/promises';

import { writePieces } from './atomic-file.js';

/** Bytes gathered before one write. */
const WRITE_BATCH = 4 * 1024 * 1024;
/** Bytes written between flushes started while the file is written. */
const FLUSH_EVERY = 64 * 1024 * 1024;

export class FileOutput {
  private batch: Buffer[] = [];
  private batched = 0;
  private written = 0;
  private flushedAt = 0;
  private writing: Promise<void> = Promise.resolve();
  private flushing: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;

  private constructor(private readonly handle: FileHandle) {}

  /** Creates the file at `path`, which must not exist. */
  static async create(path: string): Promise<FileOutput> {
    return new FileOutput(await open(path, 'wx', 0o644));
  }

  async write(chunk: Buffer): Promise<void> {
    this.batch.push(chunk);
    this.batched += chunk.length;
    if (this.batched >= WRITE_BATCH) await this.send();
  }

  /** Writes what is gathered once the write in flight is done; its failure surfaces at the next write or at the end. */
  private async send(): Promise<void> {
    await this.writing;
    this.rethrow();
    const pieces = this.batch;
    const bytes = this.batched;
    this.batch = [];
    this.batched = 0;
    this.writing = writePieces(this.handle, pieces).then(
      () => this.wrote(bytes),
      (error: unknown) => void (this.failure ??= { error }),
    );
  }

  private wrote(bytes: number): void {
    this.written += bytes;
    if (this.written - this.flushedAt < FLUSH_EVERY) return;
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
    await this.handle.sync();
    await this.handle.close();
  }

  /** Closes the file once its writes are done, whatever they came to; the caller removes it. */
  async abandon(): Promise<void> {
    await this.writing;
    await this.flushing;
    await this.handle.close().catch(() => undefined);
  }
}
