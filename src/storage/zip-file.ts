/**
 * A client's zip archive read from a file rather than from memory, with the checks and limits of
 * zip-entries.ts: its central directory is read from the file's end, and each file is unpacked as
 * a stream, held to the size and CRC-32 it declares as it goes, so that an archive of any size
 * within the limits is unpacked in a few buffers' worth of memory.
 */
import { createReadStream } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createInflateRaw } from 'node:zlib';

import { writePieces } from './atomic-file.js';
import {
  CLIENT_ARCHIVE,
  directoryEntries,
  type DirectoryEntry,
  END_SEARCH_BYTES,
  endRecord,
  filesWithin,
  LOCAL_HEADER_SIZE,
  localDataStart,
  refuse,
  Refused,
  type ZipLimits,
  type ZipRefusal,
} from './zip-entries.js';
import { DEFLATED, STORED } from './zip-format.js';

/** Bytes read at an entry's local header: up to the lengths of its name and extra field. */
const LOCAL_READ_BYTES = LOCAL_HEADER_SIZE;
/**
 * Bytes an entry is read and unpacked in at a time: each piece is one CRC-32 and one awaited write,
 * and at Node's 64 KiB (16 KiB out of zlib) a 1 GiB entry took 16,000 of them in turn.
 */
const UNPACK_CHUNK = 1024 * 1024;

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/** Runs `reading`, making `refusal`'s error of a refusal, and of a zlib or range error. */
async function refusing<T>(reading: () => Promise<T>, refusal: ZipRefusal, name?: string): Promise<T> {
  try {
    return await reading();
  } catch (error) {
    if (error instanceof Refused) throw refusal(error.message);
    if (error instanceof RangeError) throw refusal('it is cut short');
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code.startsWith('Z_')) throw refusal(`entry "${name ?? ''}" does not unpack: ${(error as Error).message}`);
    throw error;
  }
}

export class ZipFile {
  private constructor(
    private readonly path: string,
    private readonly size: number,
    private readonly entries: Map<string, DirectoryEntry>,
    private readonly refusal: ZipRefusal,
  ) {}

  /**
   * The archive at `path`, its directory read and checked (names, entries, declared sizes); what
   * `refusal` makes of the reason when it is unsafe, damaged or beyond the limits.
   */
  static async open(path: string, limits: ZipLimits, refusal: ZipRefusal = CLIENT_ARCHIVE): Promise<ZipFile> {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      return await refusing(async () => {
        const tailStart = Math.max(0, size - END_SEARCH_BYTES);
        const end = endRecord(await readAt(handle, tailStart, size - tailStart));
        if (end.offset + end.size > size) refuse('its central directory is cut short');
        const directory = await readAt(handle, end.offset, end.size);
        const files = filesWithin(directoryEntries(directory, 0, end.count, limits), limits);
        return new ZipFile(path, size, new Map(files.map((entry) => [entry.name, entry])), refusal);
      }, refusal);
    } finally {
      await handle.close();
    }
  }

  /** The archive's files (folders left out), in its order. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /** The file `name`'s bytes, for the small ones (a project). */
  async read(name: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    await this.unpack(name, async (chunk) => {
      chunks.push(chunk);
    });
    return Buffer.concat(chunks);
  }

  /** Writes the file `name` to the new file `target`, flushed; nothing stays there on failure. */
  async extract(name: string, target: string): Promise<void> {
    const handle = await open(target, 'wx', 0o644);
    try {
      await this.unpack(name, (chunk) => writePieces(handle, [chunk]));
      await handle.sync();
      await handle.close();
    } catch (error) {
      await handle.close();
      await rm(target, { force: true });
      throw error;
    }
  }

  /** Gives `sink` the unpacked bytes of `name` in order, refusing them past the size or CRC-32 it declares. */
  private async unpack(name: string, sink: (chunk: Buffer) => Promise<void>): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) throw new Error(`the archive holds no "${name}"`);
    await refusing(
      async () => {
        const start = await this.dataStart(entry);
        if (entry.method !== STORED && entry.method !== DEFLATED)
          refuse(`entry "${name}" uses compression method ${entry.method}`);
        if (start + entry.compressedSize > this.size) refuse(`entry "${name}" is cut short`);
        const raw =
          entry.compressedSize === 0
            ? Readable.from([])
            : createReadStream(this.path, {
                start,
                end: start + entry.compressedSize - 1,
                highWaterMark: UNPACK_CHUNK,
              });
        const declared = `entry "${name}" does not unpack to the ${entry.size} bytes it declares`;
        let size = 0;
        let crc = 0;
        const check = async (source: AsyncIterable<Buffer>): Promise<void> => {
          for await (const chunk of source) {
            size += chunk.length;
            if (size > entry.size) refuse(declared);
            crc = crc32(chunk, crc);
            await sink(chunk);
          }
        };
        if (entry.method === STORED) await pipeline(raw, check);
        else await pipeline(raw, createInflateRaw({ chunkSize: UNPACK_CHUNK }), check);
        if (size !== entry.size) refuse(declared);
        if (crc !== entry.crc) refuse(`entry "${name}" does not unpack to the bytes it declares (CRC-32)`);
      },
      this.refusal,
      name,
    );
  }

  private async dataStart(entry: DirectoryEntry): Promise<number> {
    const handle = await open(this.path, 'r');
    try {
      const header = await readAt(handle, entry.localOffset, LOCAL_READ_BYTES);
      return entry.localOffset + localDataStart(header, 0, entry);
    } finally {
      await handle.close();
    }
  }
}
