/**
 * A client's zip archive unpacked as it arrives, in one pass and with no copy of it kept: each
 * entry's local header is read as the body streams, and its bytes go straight to where the caller
 * puts them (a new file, written in large pieces and flushed as it grows; memory; nowhere), held
 * to the size and CRC-32 it declares. The checks and limits are zip-entries.ts's: unsafe names,
 * encryption, ZIP64, more entries or unpacked bytes than the limits (a bomb stops at the first
 * piece past them). The central directory at the end must list exactly the entries met, where they
 * were met, so that the archive unpacked is the one every other zip reader sees.
 *
 * An entry whose sizes follow its data (flag bit 3, as Steward's own bundles and zip writers that
 * stream write them) ends at the first data descriptor signature followed by the number of bytes
 * since the entry's data began; descriptors without their signature are refused.
 *
 * The body's chunks are lent: each is done with before the next is asked for, so a source may read
 * every chunk into the same memory (a socket read into one buffer, socket-body.ts). What is kept
 * longer (a header cut between two chunks, an entry kept in memory, bytes queued for inflating)
 * is copied.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createInflateRaw } from 'node:zlib';

import { FileOutput } from './file-output.js';
import {
  archiveError,
  checkEntryName,
  CLIENT_ARCHIVE,
  directoryEntries,
  type DirectoryEntry,
  END_SEARCH_BYTES,
  endRecord,
  filesWithin,
  LOCAL_HEADER_SIZE,
  refuse,
  type ZipLimits,
  type ZipRefusal,
} from './zip-entries.js';
import {
  DATA_DESCRIPTOR,
  DEFLATED,
  DESCRIPTOR_BYTES,
  DESCRIPTOR_FOLLOWS,
  DIRECTORY_ENTRY,
  ENCRYPTED,
  END_OF_DIRECTORY,
  LOCAL_HEADER,
  STORED,
} from './zip-format.js';

/** Where an entry's bytes go: a new file at `path`, memory (its bytes are answered), or nowhere. */
export type EntryOutput = { to: 'file'; path: string } | { to: 'memory' } | { to: 'nowhere' };

const DESCRIPTOR_SIGNATURE = Buffer.alloc(4);
DESCRIPTOR_SIGNATURE.writeUInt32LE(DATA_DESCRIPTOR);
const MAX_32 = 0xffffffff;
/** Most bytes of a central directory (and end record) taken: 10,000 entries of long names. */
const MAX_DIRECTORY_BYTES = 16 * 1024 * 1024;
/** Bytes of an entry handed on at a time: each may be one CRC-32 on the event loop. */
const PIECE_BYTES = 1024 * 1024;

/** The bytes of a body as they arrive, taken in exact lengths or in pieces as they come. */
class Incoming {
  private pending: Buffer[] = [];
  /** The pending bytes that are copies of this reader's own, not the source's lent memory. */
  private readonly owned = new WeakSet<Buffer>();
  private buffered = 0;
  /** Bytes taken so far: the offset in the archive of what comes next. */
  offset = 0;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private own(chunk: Buffer): Buffer {
    this.owned.add(chunk);
    return chunk;
  }

  /** Reads another chunk of the body; false once it has ended. What is still pending is copied first: the source may reuse its memory. */
  private async more(): Promise<boolean> {
    this.pending = this.pending.map((chunk) => (this.owned.has(chunk) ? chunk : this.own(Buffer.from(chunk))));
    const next = await this.source.next();
    if (next.done === true) return false;
    if (next.value.length > 0) {
      this.pending.push(next.value);
      this.buffered += next.value.length;
    }
    return true;
  }

  /** At least `length` bytes buffered, the first of them in one buffer; refused as cut short when the body ends before. */
  private async ensure(length: number): Promise<Buffer> {
    while (this.buffered < length) if (!(await this.more())) refuse('it is cut short');
    let first = this.pending[0] as Buffer;
    while (first.length < length) {
      first = this.own(Buffer.concat([first, this.pending[1] as Buffer]));
      this.pending.splice(0, 2, first);
    }
    return first;
  }

  /** Whether the body has bytes left. */
  async hasMore(): Promise<boolean> {
    while (this.buffered === 0) if (!(await this.more())) return false;
    return true;
  }

  /** The next 4 bytes as a number, not taken. */
  async peekSignature(): Promise<number> {
    return (await this.ensure(4)).readUInt32LE(0);
  }

  /** The next bytes, at most `most` and at least one, as they came; refused as cut short at the body's end. */
  async piece(most: number): Promise<Buffer> {
    if (!(await this.hasMore())) refuse('it is cut short');
    const head = this.pending[0] as Buffer;
    const piece = head.length <= most ? head : head.subarray(0, most);
    if (piece === head) this.pending.shift();
    else {
      const rest = head.subarray(most);
      this.pending[0] = this.owned.has(head) ? this.own(rest) : rest;
    }
    this.buffered -= piece.length;
    this.offset += piece.length;
    return piece;
  }

  /** Exactly `length` bytes. */
  async take(length: number): Promise<Buffer> {
    if (length === 0) return Buffer.alloc(0);
    await this.ensure(length);
    return this.piece(length);
  }

  /** The first bytes buffered, at least `length` of them, not taken. */
  peek(length: number): Promise<Buffer> {
    return this.ensure(length);
  }

  /** What is left of the body; refused past `most` bytes. */
  async rest(most: number): Promise<Buffer> {
    while (await this.more()) if (this.buffered > most) refuse(`its central directory is over ${most} bytes`);
    const rest = Buffer.concat(this.pending);
    this.offset += rest.length;
    this.pending = [];
    this.buffered = 0;
    return rest;
  }
}

/** Where an entry's unpacked bytes go. */
interface Sink {
  write(chunk: Buffer): Promise<void>;
  /** Ends the entry: the bytes kept in memory, if any. */
  finish(): Promise<Buffer | undefined>;
  /** The CRC-32 of the bytes written, once finished. */
  checksum(): number;
  abandon(): Promise<void>;
}

async function sinkFor(output: EntryOutput): Promise<Sink> {
  if (output.to === 'file') {
    // The file sums its bytes as it writes them, off the event loop where it can.
    const file = await FileOutput.create(output.path, { summed: true });
    return {
      write: (chunk) => file.write(chunk),
      finish: async () => {
        await file.finish();
        return undefined;
      },
      checksum: () => file.checksum(),
      abandon: () => file.abandon(),
    };
  }
  const chunks: Buffer[] = [];
  let crc = 0;
  return {
    write: async (chunk) => {
      crc = crc32(chunk, crc);
      if (output.to === 'memory') chunks.push(Buffer.from(chunk));
    },
    finish: async () => (output.to === 'memory' ? Buffer.concat(chunks) : undefined),
    checksum: () => crc,
    abandon: async () => undefined,
  };
}

/** An entry as its local header declares it, and where its data begins. */
interface LocalEntry extends DirectoryEntry {
  dataStart: number;
}

async function localEntry(incoming: Incoming, seen: number, limits: ZipLimits): Promise<LocalEntry> {
  const localOffset = incoming.offset;
  // Read on after more of the body is taken: copied out of the source's memory.
  const header = Buffer.from(await incoming.take(LOCAL_HEADER_SIZE));
  if (seen >= limits.entries) refuse(`it holds more than ${limits.entries} entries`);
  const name = (await incoming.take(header.readUInt16LE(26))).toString('utf8');
  await incoming.take(header.readUInt16LE(28));
  checkEntryName(name);
  const entry = {
    name,
    flags: header.readUInt16LE(6),
    method: header.readUInt16LE(8),
    crc: header.readUInt32LE(14),
    compressedSize: header.readUInt32LE(18),
    size: header.readUInt32LE(22),
    localOffset,
    dataStart: incoming.offset,
  };
  if (entry.flags & ENCRYPTED) refuse(`entry "${name}" is encrypted`);
  if (entry.method !== STORED && entry.method !== DEFLATED)
    refuse(`entry "${name}" uses compression method ${entry.method}`);
  if (entry.size === MAX_32 || entry.compressedSize === MAX_32) refuse('ZIP64 archives are not taken');
  return entry;
}

/** The entry's data as it arrives, up to its data descriptor, which is read into `entry`. */
async function* describedData(incoming: Incoming, entry: LocalEntry): AsyncGenerator<Buffer> {
  let count = 0;
  for (;;) {
    const window = await incoming.peek(DESCRIPTOR_BYTES);
    const found = descriptorIn(window, count, entry.method === STORED);
    if (found >= 0) {
      if (found > 0) yield await incoming.piece(found);
      const descriptor = await incoming.take(DESCRIPTOR_BYTES);
      entry.crc = descriptor.readUInt32LE(4);
      entry.compressedSize = descriptor.readUInt32LE(8);
      entry.size = descriptor.readUInt32LE(12);
      return;
    }
    // A descriptor may begin in the last bytes of the window, which wait for the next chunk.
    const safe = Math.min(window.length - DESCRIPTOR_BYTES + 1, PIECE_BYTES);
    count += safe;
    yield await incoming.piece(safe);
  }
}

/** Where in `window` a descriptor of an entry with `before` bytes ahead of it begins; -1 when none does. */
function descriptorIn(window: Buffer, before: number, stored: boolean): number {
  for (let at = window.indexOf(DESCRIPTOR_SIGNATURE); at >= 0 && at <= window.length - DESCRIPTOR_BYTES;) {
    const compressed = window.readUInt32LE(at + 8);
    if (compressed === before + at && (!stored || window.readUInt32LE(at + 12) === compressed)) return at;
    at = window.indexOf(DESCRIPTOR_SIGNATURE, at + 1);
  }
  return -1;
}

/** The entry's data as it arrives, its declared compressed size of it. */
async function* sizedData(incoming: Incoming, entry: LocalEntry): AsyncGenerator<Buffer> {
  for (let left = entry.compressedSize; left > 0;) {
    const piece = await incoming.piece(Math.min(left, PIECE_BYTES));
    left -= piece.length;
    yield piece;
  }
}

async function* copies(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  for await (const chunk of chunks) yield Buffer.from(chunk);
}

/**
 * Unpacks the entry's data into `sink` and finishes it, held to its declared size and CRC-32 and to
 * the `room` the limit leaves; its size and the bytes the sink kept.
 */
async function unpackEntry(
  incoming: Incoming,
  entry: LocalEntry,
  sink: Sink,
  room: { left: number; limit: number },
): Promise<{ size: number; bytes: Buffer | undefined }> {
  const described = (entry.flags & DESCRIPTOR_FOLLOWS) !== 0;
  const raw = described ? describedData(incoming, entry) : sizedData(incoming, entry);
  let size = 0;
  const declared = (): string => `entry "${entry.name}" does not unpack to the ${entry.size} bytes it declares`;
  const check = async (source: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > room.left) refuse(`its files unpack to more than ${room.limit} bytes`);
      if (!described && size > entry.size) refuse(declared());
      await sink.write(chunk);
    }
  };
  if (entry.method === STORED) await check(raw);
  else
    await pipeline(
      // Queued ahead of the inflater's pace: copied out of the source's memory.
      Readable.from(copies(raw), { objectMode: false, highWaterMark: PIECE_BYTES }),
      createInflateRaw({ chunkSize: PIECE_BYTES }),
      check,
    );
  if (size !== entry.size) refuse(declared());
  const bytes = await sink.finish();
  if (sink.checksum() !== entry.crc) refuse(`entry "${entry.name}" does not unpack to the bytes it declares (CRC-32)`);
  return { size, bytes };
}

/** Refuses a central directory that does not list exactly the entries met, where they were met. */
function checkDirectory(tail: Buffer, directoryStart: number, met: LocalEntry[], limits: ZipLimits): void {
  const end = endRecord(tail);
  if (end.offset !== directoryStart || end.size > tail.length)
    refuse('its central directory is not where its entries end');
  const listed = directoryEntries(tail, 0, end.count, limits);
  if (listed.length !== met.length) refuse('its central directory does not list the entries it holds');
  filesWithin(listed, limits);
  const byOffset = new Map(met.map((entry) => [entry.localOffset, entry]));
  for (const entry of listed) {
    const local = byOffset.get(entry.localOffset);
    const same =
      local !== undefined &&
      local.name === entry.name &&
      local.method === entry.method &&
      local.crc === entry.crc &&
      local.size === entry.size &&
      local.compressedSize === entry.compressedSize;
    if (!same) refuse(`its central directory does not list entry "${entry.name}" as it is`);
  }
}

/** Runs `reading`, making `refusal`'s error of a refusal, and of a zlib or range error. */
async function refusing<T>(reading: () => Promise<T>, refusal: ZipRefusal): Promise<T> {
  try {
    return await reading();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code.startsWith('Z_')) throw refusal(`an entry does not unpack: ${(error as Error).message}`);
    throw archiveError(error, refusal);
  }
}

/**
 * Unpacks the zip archive `body` brings as it arrives, each file where `place` puts it (which may
 * throw to refuse it); what `refusal` makes of the reason when the archive is unsafe, damaged or
 * beyond the limits; the bytes of the entries put in memory, by name. Files written are flushed;
 * on failure they stay for the caller to remove.
 */
export async function unzipStream(
  body: AsyncIterable<Buffer>,
  limits: ZipLimits,
  place: (name: string) => Promise<EntryOutput>,
  refusal: ZipRefusal = CLIENT_ARCHIVE,
): Promise<Map<string, Buffer>> {
  const incoming = new Incoming(body[Symbol.asyncIterator]());
  const met: LocalEntry[] = [];
  const names = new Set<string>();
  const kept = new Map<string, Buffer>();
  return refusing(async () => {
    let unpacked = 0;
    for (;;) {
      const signature = await incoming.peekSignature();
      if (signature === DIRECTORY_ENTRY || signature === END_OF_DIRECTORY) break;
      if (signature !== LOCAL_HEADER) refuse('its entries are damaged');
      const entry = await localEntry(incoming, met.length, limits);
      met.push(entry);
      const folder = entry.name.endsWith('/');
      if (!folder && names.has(entry.name)) refuse(`it holds "${entry.name}" twice`);
      names.add(entry.name);
      const room = { left: folder ? 0 : limits.bytes - unpacked, limit: limits.bytes };
      if ((entry.flags & DESCRIPTOR_FOLLOWS) === 0 && entry.size > room.left)
        refuse(folder ? `folder "${entry.name}" holds data` : `its files unpack to more than ${limits.bytes} bytes`);
      // Some writers give folders an empty deflated stream and a descriptor: read, and nothing kept.
      const sink = await sinkFor(folder ? { to: 'nowhere' } : await place(entry.name));
      try {
        const { size, bytes } = await unpackEntry(incoming, entry, sink, room);
        unpacked += size;
        if (bytes) kept.set(entry.name, bytes);
      } catch (error) {
        await sink.abandon();
        throw error;
      }
    }
    const directoryStart = incoming.offset;
    checkDirectory(await incoming.rest(MAX_DIRECTORY_BYTES + END_SEARCH_BYTES), directoryStart, met, limits);
    return kept;
  }, refusal);
}
